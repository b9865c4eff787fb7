"""LLM judge: ask a chat model whether the passages support the claim and read
``P(yes) / (P(yes) + P(no))`` from its next-token log-probabilities.

Two small classes share the prompt (:data:`franq.lm.prompts.FAITHFULNESS_TEMPLATE`):
:class:`LMJudgeFaithfulness` runs a local :class:`~franq.lm.model.CausalLM` (batched,
left-padded forward passes; :func:`franq.lm.labels.label_probability`), and
:class:`OpenAIJudgeFaithfulness` asks any OpenAI-compatible server that returns
``top_logprobs``. Long contexts are chunked (about 350 words at sentence boundaries) and
the claim's score is the max over chunks. Higher = more likely supported.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from franq.errors import FranqError, InputError
from franq.faithfulness.chunks import CHUNK_WORDS, chunk_context
from franq.lm.labels import LabelWords, label_probability, server_label_probability
from franq.lm.openai_client import DEFAULT_KEY_ENV, openai_client
from franq.lm.prompts import FAITHFULNESS_LABELS, faithfulness_messages, faithfulness_prompt_text
from franq.settings import Setting

log = logging.getLogger(__name__)


def _chunk_pairs(pairs: Sequence[tuple[str, str]], chunk_words: int) -> tuple[list[tuple[str, str]], list[list[int]]]:
    """Unique (chunk, claim) prompts and, per input pair, the indices of its chunks."""
    cache: dict[str, list[str]] = {}
    index: dict[tuple[str, str], int] = {}
    owners = []
    for context, claim in pairs:
        if context not in cache:
            cache[context] = chunk_context(context, max_words=chunk_words)
        owners.append([index.setdefault((chunk, claim), len(index)) for chunk in cache[context]])
    return list(index), owners


class LMJudgeFaithfulness:
    """The judge prompt on a local chat model (a loaded :class:`~franq.lm.model.CausalLM`)."""

    needs = frozenset()

    def __init__(self, lm, *, chunk_words: int = CHUNK_WORDS, max_batch_tokens: int = 4096):
        self.lm = lm
        self.chunk_words = chunk_words
        self.max_batch_tokens = max_batch_tokens
        self.name = f"judge:{lm.name}"
        self.labels = LabelWords.lookup(lm, *FAITHFULNESS_LABELS, leading_space=True)

    def _prompt_ids(self, chunk: str, claim: str) -> list[list[int]]:
        """The prompt(s) for one chunk, the chunk halved until each fits the context."""
        ids = self.lm.encode(faithfulness_prompt_text(self.lm.tokenizer, chunk, claim))
        if len(ids) <= self.lm.max_context:
            return [ids]
        words = chunk.split()
        if len(words) <= 1:
            raise FranqError(f"judge: the claim alone does not fit the model context of {self.lm.max_context}")
        half = len(words) // 2
        return self._prompt_ids(" ".join(words[:half]), claim) + self._prompt_ids(" ".join(words[half:]), claim)

    def predict(self, pairs: Sequence[tuple[str, str]], evidence=None) -> np.ndarray:
        if not pairs:
            return np.zeros(0, dtype=np.float64)
        prompts, owners = _chunk_pairs(pairs, self.chunk_words)
        flat: list[list[int]] = []
        groups = []
        for chunk, claim in prompts:
            ids = self._prompt_ids(chunk, claim)
            groups.append(list(range(len(flat), len(flat) + len(ids))))
            flat.extend(ids)
        shares = label_probability(self.lm, flat, self.labels, max_batch_tokens=self.max_batch_tokens)
        per_prompt = np.array([shares[g].max() for g in groups])
        return np.array([per_prompt[o].max() for o in owners], dtype=np.float64)


class OpenAIJudgeFaithfulness:
    """The judge prompt on an OpenAI-compatible server that returns ``top_logprobs``."""

    needs = frozenset()

    def __init__(self, model: str, *, base_url: str | None = None, api_key_env: str = DEFAULT_KEY_ENV,
                 client=None, chunk_words: int = CHUNK_WORDS, top_logprobs: int = 20, concurrency: int = 4):
        self.client = client or openai_client(base_url, api_key_env=api_key_env, where=f"judge {model!r}")
        self.model = model
        self.base_url = base_url
        self.chunk_words = chunk_words
        self.top_logprobs = top_logprobs
        self.concurrency = concurrency
        self.name = f"judge:{model}"

    def _ask(self, chunk: str, claim: str) -> float:
        return server_label_probability(
            self.client, self.model, faithfulness_messages(chunk, claim), *FAITHFULNESS_LABELS,
            top_logprobs=self.top_logprobs, where=f"judge model {self.model!r} at base_url {self.base_url!r}")

    def predict(self, pairs: Sequence[tuple[str, str]], evidence=None) -> np.ndarray:
        if not pairs:
            return np.zeros(0, dtype=np.float64)
        prompts, owners = _chunk_pairs(pairs, self.chunk_words)
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            scores = np.array(list(pool.map(lambda pc: self._ask(*pc), prompts)), dtype=np.float64)
        return np.array([scores[o].max() for o in owners], dtype=np.float64)


def judge_faithfulness(config, lm):
    """``faithfulness.name = "judge"``: the judge prompt on an OpenAI-compatible server
    (``[faithfulness.judge] base_url``), on the local model at ``model``, or on the pipeline's LM."""
    s = config.settings_for("faithfulness", "judge")
    if s["base_url"]:
        return OpenAIJudgeFaithfulness(s["model"], base_url=s["base_url"], api_key_env=s["api_key_env"])
    if s["model"]:
        from franq.lm import CausalLM

        lm = CausalLM.load(s["model"], device=config.model.device, dtype=config.model.dtype)
    return LMJudgeFaithfulness(lm, max_batch_tokens=config.batch.max_batch_tokens)


def _check_judge_settings(values, config) -> None:
    if values["base_url"] and not values["model"]:
        raise InputError("config 'faithfulness.judge.model': required with base_url (the server's model name)")


judge_faithfulness.settings = (  # [faithfulness.judge]
    Setting("model", str, None, "a local CausalLM path (unset: the pipeline's LM) or, with base_url, the "
            "server's model name"),
    Setting("base_url", str, None, "an OpenAI-compatible server that returns top_logprobs"),
    Setting("api_key_env", str, DEFAULT_KEY_ENV, "the environment variable holding the server's API key"),
)
judge_faithfulness.check_settings = _check_judge_settings
