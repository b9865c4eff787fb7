"""FactCG (Lei et al., NAACL 2025) as a faithfulness backend, by local path: the published
FactCG-DeBERTa-v3-Large checkpoint (``yaxili96/FactCG-DeBERTa-v3-Large``), a DeBERTa-v3
sequence classifier with two labels.

Reproduces the published inference, github.com/derenlei/FactCG ``factcg/inference.py`` at
commit 49748b92 (``Inferencer`` with ``use_hf_ckpt=True``: ``batch_inference``,
``chunking_src``, ``inference``, ``tokenize``) with ``factcg/utils.py``'s
``INSTRUCTION_TEMPLATE`` (commit 4eb1537f):

- the document (the claim's passages joined: :func:`franq.faithfulness.base.passages_context`)
  is chunked by ``chunking_src``: NLTK sentences, packed while their NLTK word count stays
  within 550, joined by ``"\\n"`` (a first sentence longer than that leaves an empty first
  chunk, as there);
- input: ``"{chunk}\\n\\nChoose your answer: based on the paragraph above can we conclude
  that \\"{claim}\\"?\\n\\nOPTIONS:\\n- Yes\\n- No\\nI think the answer is "``, the pad token
  set to the EOS token, ``max_length`` 2048, truncation ``only_first``, padding ``longest``;
- label reading: ``softmax(logits)[:, 1]`` per chunk; the claim's score is the max over its
  document's chunks (one hypothesis: the mean over claim sentences is over one); a
  document with no chunk (blank) gives 0, where the published code fails.

franq batches (chunk, claim) inputs across claims sorted by length (the published code, in
input order); each row is masked, so only float rounding differs.

FactCG is binary: no three-way reading, P_supported only.

``[faithfulness.factcg]``: ``model`` (the local checkpoint directory, required),
``batch_size`` (32, as the published default) and ``device``.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from franq.errors import InputError
from franq.faithfulness.published import (ChunkedVerifier, load, model_dir, positive, sent_tokenize, to_device,
                                          word_tokenize)
from franq.settings import Setting

log = logging.getLogger(__name__)

TEMPLATE = ("{text_a}\n\nChoose your answer: based on the paragraph above can we conclude that \"{text_b}\"?"
            "\n\nOPTIONS:\n- Yes\n- No\nI think the answer is ")
MAX_CHUNK_WORDS = 550
MAX_LENGTH = 2048


def chunk_document(text: str, max_words: int = MAX_CHUNK_WORDS) -> list[str]:
    """FactCG's ``chunking_src``: sentences packed while their word count stays within ``max_words``."""
    chunks: list[str] = []
    size, chunk = 0, ""
    for sentence in sent_tokenize(text):
        n = len(word_tokenize(sentence))
        if size + n <= max_words:
            chunk = f"{chunk}\n{sentence}".strip("\n")
            size += n
        else:
            chunks.append(chunk.strip("\n"))
            chunk, size = sentence, n
    if size > 0:
        chunks.append(chunk.replace(" \n ", "\n").strip("\n").strip())
    return chunks


class FactCGFaithfulness(ChunkedVerifier):
    """P_supported from the FactCG-DeBERTa-v3-Large checkpoint: the max over the context's
    chunks for each ``(context, claim)``."""

    settings = (
        Setting("model", str, None, "a local FactCG-DeBERTa-v3-Large directory (config.json, weights, tokenizer)",
                required=True),
        Setting("batch_size", int, 32, "(chunk, claim) inputs per forward pass"),
        Setting("device", str, None, "cpu, cuda, ... (unset: the model's device setting)"),
    )

    @staticmethod
    def check_settings(values, config=None) -> None:
        positive("factcg", values, ("batch_size",))

    @classmethod
    def from_config(cls, config, lm=None) -> FactCGFaithfulness:
        s = config.settings_for("faithfulness", "factcg")
        return cls(s["model"], batch_size=s["batch_size"], device=s["device"] or config.model.device)

    def __init__(self, model: str | Path, *, batch_size: int = 32, device: str | None = None):
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        positive("factcg", {"batch_size": batch_size}, ("batch_size",))
        where = "faithfulness.factcg.model"
        d = model_dir(model, where, "FactCG's config.json, weights and tokenizer")
        self.tokenizer = load(where, d, AutoTokenizer.from_pretrained)
        if not self.tokenizer.eos_token:
            raise InputError(f"config '{where}': {d}'s tokenizer has no EOS token; FactCG pads with it")
        self.tokenizer.pad_token = self.tokenizer.eos_token  # as the published tokenize()
        net = load(where, d, AutoModelForSequenceClassification.from_pretrained)
        if net.config.num_labels != 2:
            raise InputError(f"config '{where}': {d} has {net.config.num_labels} labels; FactCG has 2 "
                             "(unsupported, supported)")
        self.model, self.device = to_device(net, device)
        self.batch_size = batch_size
        self.name = f"factcg:{d.name}"

    def split(self, document: str) -> list[str]:
        """The document's chunks, as FactCG makes them."""
        return chunk_document(document)

    def score(self, items: list[tuple[str, str]]) -> np.ndarray:
        """FactCG's P(support) of (chunk, claim) inputs, in one forward pass."""
        import torch

        texts = [TEMPLATE.format(text_a=chunk, text_b=claim) for chunk, claim in items]
        enc = self.inputs(self.tokenizer(texts, max_length=MAX_LENGTH, truncation="only_first", padding="longest",
                                         return_tensors="pt"))
        with torch.inference_mode():
            logits = self.model(**enc).logits
        return torch.softmax(logits.float(), dim=-1)[:, 1].double().cpu().numpy()
