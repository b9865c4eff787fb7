"""What the trust suite runs: the answering model (a local :class:`franq.CausalLM` or an
OpenAI-compatible server), the judge (offline normalized-answer match, or a chat model's
P(CORRECT) from its label-word probabilities), and the two resources of the metrics
(all-MiniLM-L6-v2 embeddings, WordNet for METEOR), each from an installed package.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import franq
from franq.apps.trust import prompts
from franq.lm.labels import LabelWords, label_probability
from franq.lm.openai_client import openai_client
from franq.lm.resources import MINILM_PACKAGE, minilm_path, wordnet_reader  # noqa: F401 - re-exported

from .trust_metrics import judge_match


# ---------------------------------------------------------------- resources
class Embedder:
    """all-MiniLM-L6-v2 sentence embeddings (sentence-transformers, CPU), loaded once."""

    def __init__(self, path: str | None = None):
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        self.path = minilm_path(path)
        hf_logging.disable_progress_bar()  # transformers' "Loading weights" bar: franq shows its own progress only
        self.model = SentenceTransformer(str(self.path), device="cpu")
        self._cache: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            for t, v in zip(todo, self.model.encode(todo, batch_size=32, normalize_embeddings=True)):
                self._cache[t] = np.asarray(v, dtype=np.float64)
        return np.stack([self._cache[t] for t in texts])

    def cosine(self, prediction: str, golds: Sequence[str]) -> float:
        """Best cosine similarity of the answer to a gold answer (0 for an empty answer)."""
        if not prediction.strip():
            return 0.0
        v = self.encode([prediction, *golds])
        return float(np.max(v[1:] @ v[0]))


# ---------------------------------------------------------------- answering models
class LocalGenerator:
    """Greedy answers from a local causal LM (the embedded SmolLM2 by default), the
    prompts of one batch decoded together (left padding)."""

    def __init__(self, lm, *, max_new_tokens: int = 48):
        self.lm = lm
        self.max_new_tokens = max_new_tokens
        self.name = lm.name

    def render(self, messages: list[dict[str, str]]) -> str:
        tok = self.lm.tokenizer
        if getattr(tok, "chat_template", None):
            return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return "\n\n".join(m["content"] for m in messages) + "\nAnswer: "

    def generate(self, batch: Sequence[list[dict[str, str]]]) -> list[str]:
        import torch

        prompts = [self.lm.encode(self.render(m)) for m in batch]
        room = self.lm.max_context - self.max_new_tokens
        too_long = [len(p) for p in prompts if len(p) > room]
        if too_long:
            raise franq.ContextOverflowError(f"a trust prompt of {max(too_long)} tokens does not fit the context of "
                                             f"{self.lm.max_context} tokens with {self.max_new_tokens} to generate")
        width = max(len(p) for p in prompts)
        pad = self.lm.pad_id
        ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts], device=self.lm.device)
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=self.lm.device)
        with torch.inference_mode():
            out = self.lm.model.generate(ids, attention_mask=mask, max_new_tokens=self.max_new_tokens,
                                         do_sample=False, pad_token_id=pad,
                                         eos_token_id=self.lm.tokenizer.eos_token_id)
        return [self.lm.tokenizer.decode(row[width:].tolist(), skip_special_tokens=True).strip() for row in out]


class ServerGenerator:
    """Answers from an OpenAI-compatible chat server (temperature 0)."""

    def __init__(self, model: str, *, base_url: str, api_key_env: str = "OPENAI_API_KEY",
                 max_new_tokens: int = 48, timeout: float = 60.0):
        self.client = openai_client(base_url, api_key_env=api_key_env, timeout=timeout, where=f"server {model!r}")
        self.model, self.max_new_tokens = model, max_new_tokens
        self.name = f"server:{model}"

    def generate(self, batch: Sequence[list[dict[str, str]]]) -> list[str]:
        out = []
        for messages in batch:
            reply = self.client.chat.completions.create(model=self.model, messages=messages, temperature=0,
                                                        max_tokens=self.max_new_tokens)
            out.append((reply.choices[0].message.content or "").strip())
        return out

    def complete(self, prompt: str, max_tokens: int = 16) -> str:
        reply = self.client.chat.completions.create(model=self.model, temperature=0, max_tokens=max_tokens,
                                                    messages=[{"role": "user", "content": prompt}])
        return reply.choices[0].message.content or ""


# ---------------------------------------------------------------- judges
class MatchJudge:
    """Offline: 1 when a normalized gold answer occurs in the normalized answer."""

    name = "normalized-match"

    def judge(self, kind: str, items: Sequence[tuple[str, Sequence[str], str]]) -> list[float]:
        return [judge_match(answer, golds) for _, golds, answer in items]


class LocalJudge:
    """P(CORRECT) against INCORRECT from a local causal LM's next token after the paper's
    judge prompt (label-word probability, :func:`franq.lm.labels.label_probability`)."""

    def __init__(self, lm):
        self.lm = lm
        self.words = LabelWords.lookup(lm, *prompts.TRUST_JUDGE_LABELS, leading_space=True)
        self.name = f"label-words:{lm.name}"

    def judge(self, kind: str, items: Sequence[tuple[str, Sequence[str], str]]) -> list[float]:
        gen = LocalGenerator(self.lm)
        encoded = [self.lm.encode(gen.render(prompts.trust_judge_messages(kind, q, " / ".join(golds), answer)))
                   for q, golds, answer in items]
        return [float(p) for p in label_probability(self.lm, encoded, self.words)]


class ServerJudge:
    """P(CORRECT) from an OpenAI-compatible server: from the first token's top log-probs
    when the server returns them, else 1 / 0 from the reply's first word."""

    def __init__(self, model: str, *, base_url: str, api_key_env: str = "OPENAI_API_KEY", timeout: float = 60.0):
        self.client = openai_client(base_url, api_key_env=api_key_env, timeout=timeout, where=f"judge {model!r}")
        self.model = model
        self.name = f"server:{model}"

    def judge(self, kind: str, items: Sequence[tuple[str, Sequence[str], str]]) -> list[float]:
        out = []
        for q, golds, answer in items:
            reply = self.client.chat.completions.create(
                model=self.model, temperature=0, max_tokens=3, logprobs=True, top_logprobs=10,
                messages=prompts.trust_judge_messages(kind, q, " / ".join(golds), answer))
            out.append(_server_probability(reply.choices[0]))
        return out


def _server_probability(choice) -> float:
    first, second = (tuple(w.lower() for w in ws) for ws in prompts.TRUST_JUDGE_LABELS)
    content = getattr(choice, "logprobs", None) and choice.logprobs.content
    if content:
        lp = {"first": -np.inf, "second": -np.inf}
        for t in content[0].top_logprobs or []:
            word = t.token.strip().lower()
            # "INCORRECT" and its pieces ("IN", "INC") start the second word, not the first
            if word and any(s.startswith(word) for s in second) and not word.startswith("correct"):
                lp["second"] = np.logaddexp(lp["second"], t.logprob)
            elif word and any(f.startswith(word) for f in first):
                lp["first"] = np.logaddexp(lp["first"], t.logprob)
        if np.isfinite(lp["first"]) or np.isfinite(lp["second"]):
            return float(1.0 / (1.0 + np.exp(lp["second"] - lp["first"])))
    text = (choice.message.content or "").strip().upper()
    return 0.0 if text.startswith("INCORRECT") else 1.0 if text.startswith("CORRECT") else 0.5
