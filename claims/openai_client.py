"""The one way franq builds a client for an OpenAI-compatible server (vLLM, Ollama,
llama.cpp server, OpenAI): base URL, API key variable, timeout, retries with backoff, and
the key kept out of errors and logs.

It lives in ``claims/`` because the LLM decomposer's chat backend (:mod:`claims.chat`)
needs it and ``claims/`` never imports ``franq/``; :mod:`franq.lm.openai_client`
re-exports it for the rest of franq (and registers the key variable with franq's log
redaction).

The key is read from the environment variable ``api_key_env`` when the client is made
and handed to the ``openai`` client; franq never stores it, never logs it, and
:func:`redact_key` masks it in any message built from a server error. A local server
ignores the key, so a missing variable is an error only for the OpenAI API itself
(``base_url`` None); local servers get the placeholder :data:`NO_KEY`.
"""
from __future__ import annotations

import os

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
NO_KEY = "not-needed"
"""The key sent to a server when ``api_key_env`` is unset (local servers accept any)."""
DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 2


def openai_client(base_url: str | None = None, *, api_key_env: str = DEFAULT_KEY_ENV,
                  timeout: float = DEFAULT_TIMEOUT, max_retries: int = DEFAULT_RETRIES):
    """An ``openai.OpenAI`` client for the server at ``base_url`` (``None``: the OpenAI API).

    ``timeout``: seconds per request; ``max_retries``: how often the client retries a
    timeout, a connection error, HTTP 408/409/429 or 5xx, with exponential backoff and
    jitter (0: the caller retries itself, as :class:`claims.chat.OpenAIChat` does to count
    calls). Raises ``ValueError`` naming the setting for a bad value or a missing key.
    """
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ValueError(f"timeout: expected a positive number of seconds, got {timeout!r}")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ValueError(f"max_retries: expected 0 or more, got {max_retries!r}")
    key = os.environ.get(api_key_env)
    if not key:
        if base_url is None:
            raise ValueError(f"api_key_env: environment variable {api_key_env} is not set "
                             "(needed for the OpenAI API; local servers need no key)")
        key = NO_KEY
    import openai

    return openai.OpenAI(base_url=base_url, api_key=key, timeout=timeout, max_retries=max_retries)


def redact_key(text: str, api_key_env: str = DEFAULT_KEY_ENV) -> str:
    """``text`` with the value of ``api_key_env`` (if set) masked."""
    key = os.environ.get(api_key_env)
    if key and len(key) >= 4 and isinstance(text, str):
        return text.replace(key, f"<{api_key_env} redacted>")
    return text


def server_name(model: str, base_url: str | None) -> str:
    """``openai:MODEL@URL``: how results and errors name a model behind a server."""
    return f"openai:{model}@{base_url or 'api.openai.com'}"
