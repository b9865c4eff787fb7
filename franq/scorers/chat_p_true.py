"""P(True) from a chat model (issue 46.4): UQ_unfaith for a user whose model sits behind an
OpenAI-compatible chat API (hosted models, Ollama, vLLM's chat route), which gives no prompt
log-probabilities, so the token passes of ``parametric`` cannot run.

Each claim is put to the model with the question, without the passages (the knowledge term:
what the model believes without the evidence), in the P(True) form of Kadavath et al. (2022),
the reflexive baseline the FRANQ paper lists (paper 001, section 3 and table 1: "Reflexive:
P(True) (Kadavath et al., 2022)"). The paper's appendix prints no prompt for it; its numbers
come from LM-Polygraph, whose claim-level P(True) prompt (``ClaimPromptCalculator``,
src/lm_polygraph/stat_calculators/prompt.py) is :data:`TEMPLATE`, word for word, with the
question as ``q`` and the claim as ``a``. A chat model gets it as the user turn after a
one-line system turn asking for one word (:data:`SYSTEM`), so that its first token is the
verdict. One request per claim, one completion token at temperature 0 with
``top_logprobs``; P(True) = p(True) / (p(True) + p(False)), each summed over its spellings
("True", " true", "TRUE", ...) among the first token's alternatives
(:func:`franq.lm.labels.top_logprobs_probability`; 0.5 when neither is among them):
LM-Polygraph reads p("True") alone, which a chat model's first token spreads over
spellings. A server that returns no log-probabilities is refused in one line naming the
model and base_url. Requests go through the one client factory
(:func:`franq.lm.openai_client.openai_client`: its timeout and retries), ``concurrency`` at once.

Cost per claim: 1 request, 1 completion token, and a prompt of the system line and
:data:`TEMPLATE` (about 45 tokens with a chat template's markers) plus the question's and
the claim's tokens; a claim repeated under the same question in one call is asked once.
:attr:`ChatPTrueScorer.usage` counts the requests made and the tokens the server reported.
When a call fails (one claim's request refused or timed out), the answers its other
requests got are kept and used, once, by the next calls that ask for them: the batch runner
scores a failed batch again record by record, and would otherwise ask the server again for
every claim of every other record (up to :data:`KEPT` answers are kept).

``[scorers.chat_p_true]``: ``model`` (required: the server's model name), ``base_url``,
``api_key_env``, ``concurrency``, ``timeout``, ``max_retries``, ``top_logprobs``.
"""
from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from franq.errors import InputError
from franq.lm.labels import server_label_probability
from franq.lm.openai_client import DEFAULT_KEY_ENV, openai_client
from franq.scorers.base import Signal
from franq.settings import Setting

SYSTEM = "You are a careful fact checker. Reply with one word: True or False."
TEMPLATE = ("Question: {question}\n Possible answer:{claim}\n "
            "Is the possible answer True or False? The possible answer is: ")
LABELS = (("True", "true", "TRUE"), ("False", "false", "FALSE"))
KEPT = 4096
"""At most this many answers of failed calls are kept for the calls that follow."""


def _digest(key: tuple) -> bytes:
    return hashlib.blake2b("\x00".join(key).encode("utf-8", "surrogatepass"), digest_size=16).digest()


def p_true_messages(question: str, claim: str) -> list[dict[str, str]]:
    """The P(True) prompt for one claim, as chat messages (no passages)."""
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": TEMPLATE.format(question=question, claim=claim)}]


class ChatPTrueScorer:
    """P(True) of each claim from an OpenAI-compatible chat model's first-token ``top_logprobs``."""

    name = "chat_p_true"
    needs = frozenset()  # text only: the question and the claim
    signals = (Signal("p_true_chat", "prob", True, "P(True): the chat model's p('True') / (p('True') + p('False')) "
                                                  "for the claim, asked without the passages"),)
    settings = (
        Setting("model", str, None, "the server's model name", required=True),
        Setting("base_url", str, None, "the OpenAI-compatible server, e.g. http://localhost:11434/v1 "
                                       "(unset: the client's default)"),
        Setting("api_key_env", str, DEFAULT_KEY_ENV, "the environment variable holding the server's API key"),
        Setting("concurrency", int, 4, "requests in flight at once"),
        Setting("timeout", float, 60.0, "seconds to wait for one reply"),
        Setting("max_retries", int, 2, "retries of a failed request (the client's own backoff)"),
        Setting("top_logprobs", int, 20, "alternatives asked for at the first token"),
    )

    @classmethod
    def check_settings(cls, values, config=None) -> None:
        """Counts and seconds in range, before anything is asked."""
        where = f"config 'scorers.{cls.name}"
        for key, low in (("concurrency", 1), ("max_retries", 0), ("top_logprobs", 1)):
            if values[key] < low:
                raise InputError(f"{where}.{key}': expected an integer >= {low}, got {values[key]!r}")
        if values["top_logprobs"] > 20:
            raise InputError(f"{where}.top_logprobs': the OpenAI API allows at most 20, got {values['top_logprobs']!r}")
        if values["timeout"] <= 0:
            raise InputError(f"{where}.timeout': expected a positive number of seconds, got {values['timeout']!r}")

    @classmethod
    def from_config(cls, config, lm=None) -> ChatPTrueScorer:
        s = config.settings_for("scorers", cls.name)
        cls.check_settings(s)
        return cls(s["model"], base_url=s["base_url"], api_key_env=s["api_key_env"], concurrency=s["concurrency"],
                   timeout=s["timeout"], max_retries=s["max_retries"], top_logprobs=s["top_logprobs"])

    def __init__(self, model: str, *, base_url: str | None = None, api_key_env: str = DEFAULT_KEY_ENV,
                 concurrency: int = 4, timeout: float = 60.0, max_retries: int = 2, top_logprobs: int = 20,
                 client=None):
        self.model, self.base_url = model, base_url
        self.where = f"scorer {self.name}: model {model!r} at base_url {base_url!r}"
        self.name = f"{type(self).name}:{model}"
        """The stack names the model: a calibrator fitted on one chat model's P(True) does not
        apply to another's."""
        self.client = client or openai_client(base_url, api_key_env=api_key_env, timeout=timeout,
                                              max_retries=max_retries, where=f"config 'scorers.{type(self).name}'")
        self.concurrency = max(1, int(concurrency))
        self.top_logprobs = top_logprobs
        self.usage = {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0}
        """What this scorer has asked so far: requests, and the tokens the server reported."""
        self._lock = threading.Lock()
        self._kept: dict[bytes, float] = {}
        """Answers of failed calls, by :func:`_digest` of their key (a key with the passages
        may hold megabytes of text)."""

    def _count(self, usage) -> None:
        with self._lock:
            self.usage["prompt_tokens"] += int(getattr(usage, "prompt_tokens", 0) or 0)
            self.usage["completion_tokens"] += int(getattr(usage, "completion_tokens", 0) or 0)

    def key(self, e) -> tuple:
        """What one request asks for claim evidence ``e``: a claim asked twice in one call
        (the same question) is asked once."""
        return e.question, e.claim.text

    def messages(self, key: tuple) -> list[dict[str, str]]:
        return p_true_messages(*key)

    def ask(self, key: tuple) -> float:
        """P(True) of one claim (one request)."""
        with self._lock:
            self.usage["requests"] += 1
        return server_label_probability(self.client, self.model, self.messages(key), *LABELS,
                                        top_logprobs=self.top_logprobs, where=self.where, usage=self._count)

    def score(self, batch: Sequence) -> dict[str, np.ndarray]:
        keys = [self.key(e) for e in batch]
        unique = list(dict.fromkeys(keys))
        with self._lock:
            got = {k: self._kept.pop(d) for k in unique if (d := _digest(k)) in self._kept}
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            futures = [(k, pool.submit(self.ask, k)) for k in unique if k not in got]
        failed = [f.exception() for _, f in futures if f.exception() is not None]
        got.update((k, f.result()) for k, f in futures if f.exception() is None)
        if failed:  # keep what was answered for the retry; an outage (stops_run) is raised first
            with self._lock:
                self._kept.update((_digest(k), p) for k, p in got.items())
                for d in list(self._kept)[:max(0, len(self._kept) - KEPT)]:
                    del self._kept[d]
            raise next((e for e in failed if getattr(e, "stops_run", False)), failed[0])
        return {self.signals[0].name: np.array([got[k] for k in keys], dtype=np.float64)}

    def probability(self, primary: np.ndarray) -> np.ndarray:
        return np.asarray(primary, dtype=np.float64)
