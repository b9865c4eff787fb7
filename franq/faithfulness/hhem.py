"""HHEM-2.1-Open (Vectara's hallucination evaluation model) as a faithfulness backend, by
local path, without running the model repository's code (no ``trust_remote_code``).

Reproduces the published inference, huggingface.co/vectara/hallucination_evaluation_model
``modeling_hhem_v2.py`` (``HHEMv2ForSequenceClassification.__init__`` and ``predict``, read in
copies of that file; vectara/HCMBench ``HHEM.py`` reads HHEM the same way: prompt,
first-token logits, class 1) with its ``config.json`` (``foundation``, ``prompt``): a
``T5ForTokenClassification`` (2 labels) built from the foundation model's config
(``google/flan-t5-base``), its weights under ``t5.*`` in the HHEM ``model.safetensors``, and
the foundation's tokenizer;

- input: the prompt ``"<pad> Determine if the hypothesis is true given the premise?\\n\\n
  Premise: {text1}\\n\\nHypothesis: {text2}"`` (``config.json``'s ``prompt`` when it has
  one), premise = the claim's passages joined (:func:`franq.faithfulness.base.passages_context`),
  hypothesis = the claim; tokenized with padding and no truncation, as the published code
  (HHEM-2.1-Open reads any length: T5's relative positions), so no chunking;
- label reading: the logits of the first token (the leading ``<pad>``), softmaxed; the
  consistency score is the probability of class 1, taken as P_supported.

No truncation means a long context costs attention memory quadratic in its tokens: franq
batches by padded tokens (``batch_tokens``), a longer input alone.

HHEM is binary (consistent or hallucinated): no three-way reading, P_supported only.

``[faithfulness.hhem]``: ``model`` (the HHEM directory: config.json + model.safetensors,
required), ``foundation`` (a local flan-t5-base directory: its config.json and tokenizer;
unset: ``model``, when it holds them too), ``batch_size`` (8), ``batch_tokens`` (16384 padded
tokens per forward pass) and ``device``.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from franq.errors import FranqError, InputError, ModelNotFoundError
from franq.faithfulness.published import (load, max_over_chunks, model_dir, model_type, positive, read_config,
                                          to_device)
from franq.settings import Setting

log = logging.getLogger(__name__)

PROMPT = "<pad> Determine if the hypothesis is true given the premise?\n\nPremise: {text1}\n\nHypothesis: {text2}"
CONSISTENT = 1  # the class whose probability is HHEM's score
FOUNDATION = "google/flan-t5-base"


class HHEMFaithfulness:
    """P_supported = HHEM-2.1-Open's consistency score of (passages, claim)."""

    needs = frozenset()
    settings = (
        Setting("model", str, None, "a local HHEM-2.1-Open directory (config.json, model.safetensors)", required=True),
        Setting("foundation", str, None, "a local flan-t5-base directory: the T5 config and tokenizer HHEM is "
                                         "built on (unset: model, when it holds them)"),
        Setting("batch_size", int, 8, "(passages, claim) inputs per forward pass"),
        Setting("batch_tokens", int, 16384, "padded tokens per forward pass (a longer input alone)"),
        Setting("device", str, None, "cpu, cuda, ... (unset: the model's device setting)"),
    )

    @staticmethod
    def check_settings(values, config=None) -> None:
        positive("hhem", values, ("batch_size", "batch_tokens"))

    @classmethod
    def from_config(cls, config, lm=None) -> HHEMFaithfulness:
        s = config.settings_for("faithfulness", "hhem")
        return cls(s["model"], foundation=s["foundation"], batch_size=s["batch_size"],
                   batch_tokens=s["batch_tokens"], device=s["device"] or config.model.device)

    def __init__(self, model: str | Path, *, foundation: str | Path | None = None, batch_size: int = 8,
                 batch_tokens: int = 16384, device: str | None = None):
        from transformers import AutoTokenizer, T5Config, T5ForTokenClassification

        positive("hhem", {"batch_size": batch_size, "batch_tokens": batch_tokens}, ("batch_size", "batch_tokens"))
        where = "faithfulness.hhem.model"
        d = model_dir(model, where, "HHEM-2.1-Open's config.json and model.safetensors", tokenizer=False)
        if not (d / "model.safetensors").is_file():
            raise ModelNotFoundError(f"config '{where}': {d} has no model.safetensors (HHEM-2.1-Open's weights; "
                                     "franq never downloads)")
        hhem = read_config(d, where)
        named = hhem.get("foundation", FOUNDATION)
        if not foundation and hhem.get("model_type") != "t5":
            raise ModelNotFoundError(f"config 'faithfulness.hhem.foundation': required: {d}/config.json is "
                                     f"HHEM's, built on {named!r}; give a local directory with that model's "
                                     "config.json and tokenizer (franq never downloads)")
        where_base = "faithfulness.hhem.foundation" if foundation else where
        base = model_dir(foundation or d, where_base, f"the T5 config.json and tokenizer of {named}", weights=False)
        found = model_type(base, where_base)
        if found != "t5":
            raise InputError(f"config '{where_base}': {base} holds a {found!r} config, not the T5 config HHEM is "
                             f"built on ({named})")
        t5 = load(where_base, base, T5Config.from_pretrained)
        t5.num_labels = 2
        self.prompt = hhem.get("prompt") or PROMPT
        self.tokenizer = load(where_base, base, AutoTokenizer.from_pretrained)
        net = T5ForTokenClassification(t5)
        self._load_weights(net, d / "model.safetensors", base)
        self.model, self.device = to_device(net, device)
        self.batch_size, self.batch_tokens = batch_size, batch_tokens
        self.name = f"hhem-2.1-open:{d.name}"

    @staticmethod
    def _load_weights(net, path: Path, base: Path) -> None:
        """HHEM's ``t5.*`` tensors into ``net`` (a one-line error when they do not fit)."""
        from safetensors.torch import load_file

        where = "faithfulness.hhem.model"
        try:
            state = {k.removeprefix("t5."): v for k, v in load_file(path).items()}
        except Exception as exc:  # noqa: BLE001 - safetensors raises several types for a bad file
            raise FranqError(f"config '{where}': cannot read {path}: {str(exc).splitlines()[0]}") from None
        want = set(net.state_dict())
        missing = [k for k in sorted(want - set(state)) if not k.endswith("embed_tokens.weight")]  # tied to shared
        unexpected = sorted(set(state) - want)
        if missing or unexpected:
            raise FranqError(f"config '{where}': {path} is not an HHEM-2.1 checkpoint for the T5 config in {base}: "
                             f"missing {missing[:6]}, unexpected {unexpected[:6]}")
        try:
            net.load_state_dict(state, strict=False)
        except RuntimeError as exc:
            raise FranqError(f"config '{where}': its tensors do not fit the T5 config in {base} "
                             f"(HHEM-2.1-Open is built on flan-t5-base): {str(exc).splitlines()[0]}") from None

    def _text(self, item: tuple[str, str]) -> str:
        return self.prompt.format(text1=item[0], text2=item[1])

    def _tokens(self, item: tuple[str, str]) -> int:
        return len(self.tokenizer(self._text(item))["input_ids"])

    def scores(self, items: Sequence[tuple[str, str]]) -> np.ndarray:
        """HHEM's ``predict`` on ``(premise, hypothesis)`` pairs, in one forward pass."""
        import torch

        enc = self.tokenizer([self._text(it) for it in items], return_tensors="pt", padding=True)
        enc = {k: v.to(self.device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
        with torch.inference_mode():
            logits = self.model(**enc).logits[:, 0, :]
        return torch.softmax(logits.float(), dim=-1)[:, CONSISTENT].double().cpu().numpy()

    def predict(self, pairs: Sequence[tuple[str, str]], evidence=None) -> np.ndarray:
        """HHEM's consistency score for each ``(context, claim)``."""
        if not pairs:
            return np.zeros(0, dtype=np.float64)
        return max_over_chunks([[c] for c, _ in pairs], [s for _, s in pairs], self.scores,
                               batch_size=self.batch_size, cost=self._tokens, batch_cost=self.batch_tokens)
