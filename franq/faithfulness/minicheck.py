"""MiniCheck (Tang, Laban and Durrett, EMNLP 2024) as a faithfulness backend, by local path:
its three model kinds, ``flan-t5`` (MiniCheck-Flan-T5-Large, a seq2seq model), ``roberta``
(MiniCheck-RoBERTa-Large) and ``deberta`` (MiniCheck-DeBERTa-v3-Large), both sequence
classifiers with two labels.

Reproduces the published inference, github.com/Liyan06/MiniCheck at commit e9fd26ef
(``minicheck/inference.py``: ``sent_tokenize_with_newlines``, ``Inferencer.__init__``,
``inference_per_example``, ``inference`` and ``batch_tokenize``; ``minicheck/minicheck.py``:
``MiniCheck._score_inferencer``, the default chunk sizes):

- the document (the claim's passages, joined as every text backend reads them:
  :func:`franq.faithfulness.base.passages_context`) is split into sentences per line
  (``sent_tokenize_with_newlines``: NLTK sentences of each ``\\n`` block, a ``"\\n"`` between
  blocks), then greedily packed into chunks of at most ``chunk_size`` units: 500 words
  (whitespace split) for flan-t5, 400 tokens of the model's tokenizer (no special tokens,
  each sentence truncated at the model length) for roberta and deberta; each chunk is
  ``" ".join(sentences).replace(" \\n ", "\\n").strip()``, empty chunks dropped;
- input: ``chunk + tokenizer.eos_token + claim``, with ``"predict: "`` in front for flan-t5;
  tokenized with ``max_length`` 2048 (roberta: 512) and truncation;
- label reading: flan-t5 runs one decoder step from token 0 and takes the softmax over the
  logits of token ids 3 (no support) and 209 ("1": support), P(support) the second;
  roberta / deberta take ``softmax(logits)[:, 1]``;
- a claim's P_supported is the max over its document's chunks (``max_support_prob``); a
  document with no chunk (blank) gives 0, where the published code fails.

franq batches (chunk, claim) inputs across claims (the published code, one document's chunks
at a time); each row is masked, so only float rounding differs.

MiniCheck is binary (supported or not): it has no three-way reading, so it gives
P_supported only (a three-condition calibrator needs the ``verifier`` backend).

``[faithfulness.minicheck]``: ``model`` (the local model directory, required), ``kind``
(unset: from its config.json, t5 -> flan-t5, roberta -> roberta, deberta-v2 -> deberta),
``chunk_size`` (unset: 500 / 400 / 400), ``batch_size`` (16, as the published default) and
``device``.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from franq.errors import InputError
from franq.faithfulness.published import (ChunkedVerifier, load, model_dir, model_type, positive, sent_tokenize,
                                          to_device)
from franq.settings import Setting

log = logging.getLogger(__name__)

KINDS = ("flan-t5", "roberta", "deberta")
MODEL_TYPES = {"t5": "flan-t5", "roberta": "roberta", "deberta-v2": "deberta"}
CHUNK_SIZE = {"flan-t5": 500, "roberta": 400, "deberta": 400}
MAX_LENGTH = {"flan-t5": 2048, "roberta": 512, "deberta": 2048}
T5_LABEL_IDS = (3, 209)
"""flan-t5: the logits read at the first decoder step: no support, support ("1")."""


def sentences_with_newlines(text: str) -> list[str]:
    """MiniCheck's ``sent_tokenize_with_newlines``: the sentences of each line, ``"\\n"`` between lines."""
    out: list[str] = []
    for block in text.split("\n"):
        out.extend(sent_tokenize(block))
        out.append("\n")
    return out[:-1]


def pack(sentences: Sequence[str], size: int, count) -> list[str]:
    """MiniCheck's ``chunks``: sentences packed greedily while their ``count`` stays within
    ``size``; then ``" \\n "`` restored to newlines, stripped, empty chunks dropped."""
    chunks, current, n = [], [], 0
    for sentence in sentences:
        k = count(sentence)
        if n + k > size:
            chunks.append(" ".join(current))
            current, n = [sentence], k
        else:
            current.append(sentence)
            n += k
    if current:
        chunks.append(" ".join(current))
    return [c for c in (c.replace(" \n ", "\n").strip() for c in chunks) if c]


class MiniCheckFaithfulness(ChunkedVerifier):
    """P_supported from a MiniCheck model directory (flan-t5, roberta or deberta): its
    max_support_prob for each ``(context, claim)``."""

    settings = (
        Setting("model", str, None, "a local MiniCheck model directory (e.g. MiniCheck-Flan-T5-Large)", required=True),
        Setting("kind", str, None, f"one of {list(KINDS)} (unset: from the model's config.json)"),
        Setting("chunk_size", int, None, "document chunk size: words for flan-t5, tokens otherwise (unset: 500 / 400)"),
        Setting("batch_size", int, 16, "(chunk, claim) inputs per forward pass"),
        Setting("device", str, None, "cpu, cuda, ... (unset: the model's device setting)"),
    )

    @staticmethod
    def check_settings(values, config=None) -> None:
        if values["kind"] is not None and values["kind"] not in KINDS:
            raise InputError(f"config 'faithfulness.minicheck.kind': expected one of {list(KINDS)}, "
                             f"got {values['kind']!r}")
        positive("minicheck", values, ("chunk_size", "batch_size"))

    @classmethod
    def from_config(cls, config, lm=None) -> MiniCheckFaithfulness:
        s = config.settings_for("faithfulness", "minicheck")
        return cls(s["model"], kind=s["kind"], chunk_size=s["chunk_size"], batch_size=s["batch_size"],
                   device=s["device"] or config.model.device)

    def __init__(self, model: str | Path, *, kind: str | None = None, chunk_size: int | None = None,
                 batch_size: int = 16, device: str | None = None):
        from transformers import AutoModelForSeq2SeqLM, AutoModelForSequenceClassification, AutoTokenizer

        where = "faithfulness.minicheck.model"
        d = model_dir(model, where, "a MiniCheck model's config.json, weights and tokenizer")
        self.check_settings({"kind": kind, "chunk_size": chunk_size, "batch_size": batch_size})
        found = model_type(d, where)
        self.kind = kind or MODEL_TYPES.get(found)
        if self.kind not in KINDS:
            raise InputError(f"config 'faithfulness.minicheck.kind': {d} holds a {found!r} model, not one of "
                             f"MiniCheck's ({', '.join(MODEL_TYPES)}); set kind to one of {list(KINDS)}")
        self.chunk_size = chunk_size or CHUNK_SIZE[self.kind]
        self.max_length = MAX_LENGTH[self.kind]
        self.batch_size = batch_size
        self.tokenizer = load(where, d, AutoTokenizer.from_pretrained)
        if not self.tokenizer.eos_token:
            raise InputError(f"config '{where}': {d}'s tokenizer has no EOS token; MiniCheck joins chunk and claim "
                             "with it")
        if self.kind == "flan-t5":
            net = load(where, d, AutoModelForSeq2SeqLM.from_pretrained)
            if net.config.vocab_size <= max(T5_LABEL_IDS):
                raise InputError(f"config '{where}': {d} has {net.config.vocab_size} tokens; MiniCheck-Flan-T5 "
                                 f"reads token ids {T5_LABEL_IDS}")
        else:
            net = load(where, d, AutoModelForSequenceClassification.from_pretrained)
            if net.config.num_labels != 2:
                raise InputError(f"config '{where}': {d} has {net.config.num_labels} labels; MiniCheck's "
                                 "classifiers have 2 (unsupported, supported)")
        self.model, self.device = to_device(net, device)
        self.name = f"minicheck-{self.kind}:{d.name}"

    def _count(self, sentence: str) -> int:
        if self.kind == "flan-t5":
            return len(sentence.split())
        return len(self.tokenizer(sentence, padding=False, add_special_tokens=False, max_length=self.max_length,
                                  truncation=True)["input_ids"])

    def split(self, document: str) -> list[str]:
        """The document's chunks, as MiniCheck makes them."""
        return pack(sentences_with_newlines(document) or [""], self.chunk_size, self._count)

    def score(self, items: list[tuple[str, str]]) -> np.ndarray:
        """MiniCheck's P(support) of (chunk, claim) inputs, in one forward pass."""
        import torch

        texts = [self.tokenizer.eos_token.join([chunk, claim]) for chunk, claim in items]
        if self.kind == "flan-t5":
            texts = ["predict: " + t for t in texts]
        enc = self.inputs(self.tokenizer(texts, max_length=self.max_length, truncation=True, padding=True,
                                         return_tensors="pt"))
        with torch.inference_mode():
            if self.kind == "flan-t5":
                start = torch.zeros((enc["input_ids"].size(0), 1), dtype=torch.long, device=self.device)
                logits = self.model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                                    decoder_input_ids=start).logits[:, 0, list(T5_LABEL_IDS)]
            else:
                logits = self.model(**enc).logits
            return torch.softmax(logits.float(), dim=-1)[:, 1].double().cpu().numpy()
