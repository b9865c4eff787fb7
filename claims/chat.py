"""Chat backends for LLM decomposition: any OpenAI-compatible server (vLLM, Ollama,
llama.cpp server, OpenAI) through the ``openai`` client.

A backend is one small class with a ``name`` and ``complete(messages) -> ChatReply``.
The local-model backend lives in :mod:`franq.lm.chat` (it needs ``CausalLM``, and
``claims/`` never imports ``franq/``).
"""
from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from claims.openai_client import DEFAULT_KEY_ENV, openai_client, redact_key, server_name

log = logging.getLogger(__name__)


class ChatError(RuntimeError):
    """A chat call failed for good (after its retries); the message says why."""


@dataclass(frozen=True)
class ChatReply:
    """One completion: its text, token counts as reported by the backend, and how many
    HTTP/model calls it took (retries included)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 1


@runtime_checkable
class ChatModel(Protocol):
    """A chat model answering at temperature 0; ``name`` keys the decomposition cache."""

    name: str

    def complete(self, messages: list[dict[str, str]], *, max_tokens: int) -> ChatReply: ...


class OpenAIChat:
    """Chat completions from an OpenAI-compatible server, at temperature 0.

    ``base_url`` points at the server (e.g. ``http://localhost:8000/v1`` for vLLM,
    ``http://localhost:11434/v1`` for Ollama); ``None`` means the OpenAI API. The client
    comes from :func:`claims.openai_client.openai_client`: the API key is read from the
    environment variable ``api_key_env`` at construction and never stored or logged;
    local servers accept any key, so a missing variable is only an error when
    ``base_url`` is None. Each call has a ``timeout`` (seconds); timeouts, connection
    errors, HTTP 429 and 5xx are retried up to ``max_retries`` times with exponential
    backoff (``backoff`` seconds, doubled each retry, with jitter).
    """

    def __init__(self, model: str, *, base_url: str | None = None, api_key_env: str = DEFAULT_KEY_ENV,
                 timeout: float = 60.0, max_retries: int = 2, backoff: float = 1.0):
        if not model:
            raise ValueError("decomposer_model: an OpenAI-compatible backend needs a model name")
        if max_retries < 0:
            raise ValueError(f"max_retries: expected 0 or more, got {max_retries!r}")
        import openai

        self._openai = openai
        # The client's own retries are off: ours count calls and are the same for every server.
        self._client = openai_client(base_url, api_key_env=api_key_env, timeout=timeout, max_retries=0)
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.max_retries = max_retries
        self.backoff = backoff
        self.name = server_name(model, base_url)

    def complete(self, messages: list[dict[str, str]], *, max_tokens: int = 1024) -> ChatReply:
        o = self._openai
        retryable = (o.APITimeoutError, o.APIConnectionError, o.RateLimitError, o.InternalServerError)
        calls = 0
        while True:
            calls += 1
            try:
                resp = self._client.chat.completions.create(
                    model=self.model, messages=messages, temperature=0, max_tokens=max_tokens)
            except retryable as exc:
                if calls > self.max_retries:
                    raise ChatError(redact_key(f"{self.name}: {type(exc).__name__} after {calls} call(s): {exc}",
                                               self.api_key_env)) from exc
                delay = self.backoff * 2 ** (calls - 1) * (0.5 + random.random() / 2)
                log.warning("%s: %s, retrying in %.1fs", self.name, type(exc).__name__, delay)
                time.sleep(delay)
                continue
            except o.APIError as exc:  # 4xx other than 429: retrying will not help
                raise ChatError(redact_key(f"{self.name}: {type(exc).__name__}: {exc}", self.api_key_env)) from exc
            choice = resp.choices[0] if resp.choices else None
            text = (choice.message.content or "") if choice is not None else ""
            usage = resp.usage
            return ChatReply(text, getattr(usage, "prompt_tokens", 0) or 0,
                             getattr(usage, "completion_tokens", 0) or 0, calls)
