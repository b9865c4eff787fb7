"""P(first label word) of chat prompts, on a local model or an OpenAI-compatible server.

Both backends answer the same call, ``probability(messages_list, labels) -> np.ndarray``,
where ``labels`` is a ``(first spellings, second spellings)`` pair as in
:mod:`franq.lm.prompts` (``*_LABELS``) and the result is
``p(first) / (p(first) + p(second))`` from the reply's first-token log-probabilities
(:func:`franq.lm.labels.pair_probability`, :func:`~franq.lm.labels.top_logprobs_probability`). Higher = the first label.

:class:`LocalLabeler` renders the messages with the model's chat template and reads the
next-token distribution (:func:`franq.lm.labels.label_probability`, batched);
:class:`OpenAILabeler` asks for one token with ``logprobs`` / ``top_logprobs`` and sums
the alternatives that spell each label (a server that returns no log-probabilities is an
error naming the model and URL).
"""
from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from franq import FranqError
from franq.lm.labels import LabelWords, label_probability, server_label_probability
from franq.lm.openai_client import openai_client, server_name
from franq.lm.prompts import chat_text

Labels = tuple[Sequence[str], Sequence[str]]


class LocalLabeler:
    """Label-word probabilities from a loaded :class:`~franq.lm.CausalLM`."""

    def __init__(self, lm, *, max_batch_tokens: int = 4096):
        self.lm = lm
        self.max_batch_tokens = max_batch_tokens
        self.name = f"local:{lm.name}"
        self._words: dict[tuple, LabelWords] = {}

    def count_tokens(self, text: str) -> int:
        return len(self.lm.encode(text))

    def _label_words(self, labels: Labels) -> LabelWords:
        key = (tuple(labels[0]), tuple(labels[1]))
        if key not in self._words:
            self._words[key] = LabelWords.lookup(self.lm, *key, leading_space=True)
        return self._words[key]

    def prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        fallback = "\n\n".join(m["content"] for m in messages) + "\n"
        ids = self.lm.encode(chat_text(self.lm.tokenizer, messages, fallback=fallback))
        if len(ids) > self.lm.max_context:
            raise FranqError(f"{self.name}: a prompt of {len(ids)} tokens does not fit the model context of "
                             f"{self.lm.max_context}")
        return ids

    def probability(self, messages_list: Sequence[list[dict[str, str]]], labels: Labels) -> np.ndarray:
        if not messages_list:
            return np.zeros(0, dtype=np.float64)
        prompts = [self.prompt_ids(m) for m in messages_list]
        return label_probability(self.lm, prompts, self._label_words(labels), max_batch_tokens=self.max_batch_tokens)


class OpenAILabeler:
    """Label-word probabilities from an OpenAI-compatible server's ``top_logprobs``."""

    def __init__(self, model: str, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 client=None, top_logprobs: int = 20, concurrency: int = 4, timeout: float = 60.0):
        self.client = client or openai_client(base_url, api_key_env=api_key_env, timeout=timeout,
                                              where=f"labeler {model!r}")
        self.model = model
        self.base_url = base_url
        self.top_logprobs = top_logprobs
        self.concurrency = concurrency
        self.name = server_name(model, base_url)

    def count_tokens(self, text: str) -> int:
        """An estimate (no tokenizer here): 4 characters a token."""
        return max(1, len(text) // 4)

    def _ask(self, messages: list[dict[str, str]], labels: Labels) -> float:
        return server_label_probability(self.client, self.model, messages, *labels,
                                        top_logprobs=self.top_logprobs, where=self.name)

    def probability(self, messages_list: Sequence[list[dict[str, str]]], labels: Labels) -> np.ndarray:
        if not messages_list:
            return np.zeros(0, dtype=np.float64)
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return np.array(list(pool.map(lambda m: self._ask(m, labels), messages_list)), dtype=np.float64)
