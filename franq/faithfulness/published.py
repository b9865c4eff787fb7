"""What the published verifier backends share (:mod:`franq.faithfulness.minicheck`,
:mod:`~franq.faithfulness.hhem`, :mod:`~franq.faithfulness.factcg`): loading a local
Hugging Face directory (franq never downloads; a missing file is a one-line error naming the
setting and what is missing), the sentence and word tokenizers their own code uses (NLTK's
``sent_tokenize`` and ``word_tokenize``), and batched scoring of the unique (chunk, claim)
inputs with the max over each claim's chunks.

NLTK's ``sent_tokenize`` needs its Punkt model (``python -m nltk.downloader punkt_tab``);
without it, sentences are split by an untrained Punkt tokenizer (the same algorithm without
the English abbreviation list), with a warning once; without NLTK, by franq's own splitter.
Chunk borders, and so scores of documents longer than one chunk, can then differ slightly
from the published code's.
"""
from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from franq.errors import InputError, ModelNotFoundError

log = logging.getLogger(__name__)

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "spm.model", "tokenizer.model", "vocab.json",
                   "vocab.txt", "spiece.model")
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json")


@functools.lru_cache(maxsize=1)
def _sentence_splitter() -> Callable[[str], list[str]]:
    """NLTK's English Punkt ``sent_tokenize``; else (warned once) an untrained Punkt, or franq's splitter."""
    try:
        import nltk
    except ImportError:
        from claims.decompose import split_sentences

        log.warning("nltk is not installed: sentences for the published verifiers' chunks are split by franq's "
                    "splitter (pip install 'franq[verifiers]' for the published code's split)")
        return lambda text: [text[s:e] for s, e in split_sentences(text)]
    try:
        nltk.sent_tokenize("Punkt. Loaded.")
        return nltk.sent_tokenize
    except LookupError:
        from nltk.tokenize.punkt import PunktSentenceTokenizer

        log.warning("nltk's Punkt model is not installed: sentences for the published verifiers' chunks are split "
                    "by an untrained Punkt tokenizer (python -m nltk.downloader punkt_tab for the published split)")
        return PunktSentenceTokenizer().tokenize


@functools.lru_cache(maxsize=1)
def _word_splitter() -> Callable[[str], list[str]]:
    try:
        from nltk.tokenize import NLTKWordTokenizer
    except ImportError:
        return lambda text: re.findall(r"\w+|[^\w\s]", text)
    return NLTKWordTokenizer().tokenize


def sent_tokenize(text: str) -> list[str]:
    """NLTK's ``sent_tokenize`` (English Punkt), as MiniCheck and FactCG call it."""
    return _sentence_splitter()(text)


def word_tokenize(text: str) -> list[str]:
    """NLTK's ``word_tokenize``: Punkt sentences, then the Treebank word tokenizer."""
    words = _word_splitter()
    return [w for s in sent_tokenize(text) for w in words(s)]


def model_dir(path: str | Path | None, setting: str, what: str, *, tokenizer: bool = True,
              weights: bool = True) -> Path:
    """``path`` as a local model directory holding a config.json (and, as asked, tokenizer
    files and weights); else a one-line error naming ``setting`` and what is missing."""
    if not path or not str(path).strip():
        raise ModelNotFoundError(f"config '{setting}': required: a local directory with {what} (franq never "
                                 "downloads)")
    d = Path(path).expanduser()
    if not d.is_dir():
        raise ModelNotFoundError(f"config '{setting}': no directory at {d} (a local directory with {what}; "
                                 "franq never downloads)")
    names = {p.name for p in d.iterdir()}
    missing = [] if "config.json" in names else ["config.json"]
    if tokenizer and not names & set(TOKENIZER_FILES):
        missing.append("tokenizer files (tokenizer.json, spm.model, spiece.model or vocab.*)")
    if weights and not names & set(WEIGHT_FILES):
        missing.append("weights (model.safetensors or pytorch_model.bin)")
    if missing:
        raise ModelNotFoundError(f"config '{setting}': {d} has no {' and no '.join(missing)}; it must hold {what} "
                                 "(franq never downloads)")
    return d


def read_config(d: Path, setting: str) -> dict:
    """``d/config.json`` (a one-line error naming ``setting`` when it is not a JSON object)."""
    try:
        config = json.loads((d / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"config '{setting}': cannot read {d / 'config.json'}: {str(exc).splitlines()[0]}") from None
    if not isinstance(config, dict):
        raise InputError(f"config '{setting}': {d / 'config.json'} is not a JSON object")
    return config


def model_type(d: Path, setting: str) -> str | None:
    """``model_type`` of ``d/config.json``."""
    return read_config(d, setting).get("model_type")


def load(setting: str, d: Path, loader: Callable, *args, **kwargs):
    """``loader(d, *args, local_files_only=True, **kwargs)`` (a transformers ``from_pretrained``),
    its failure one line naming ``setting``; no download, no progress bar."""
    from transformers.utils import logging as hf_logging

    from franq.lm.load import checkpoint_error

    hf_logging.disable_progress_bar()
    try:
        return loader(d, *args, local_files_only=True, **kwargs)
    except Exception as exc:  # noqa: BLE001 - transformers raises many types for a broken directory
        raise checkpoint_error(f"config '{setting}'", d, exc) from None


def max_over_chunks(chunked: Sequence[list[str]], claims: Sequence[str],
                    score: Callable[[list[tuple[str, str]]], np.ndarray], *, batch_size: int,
                    cost: Callable[[tuple[str, str]], int] | None = None, batch_cost: int | None = None) -> np.ndarray:
    """Per claim, the max of ``score`` over its context's chunks (0 for a context with no
    chunk). ``chunked[k]``: claim k's chunks; every unique (chunk, claim) is scored once, in
    batches sorted by length (padding changes no value: each row is masked) of at most
    ``batch_size`` inputs and, with ``cost`` (an input's tokens), at most ``batch_cost``
    padded tokens (a longer input alone)."""
    index: dict[tuple[str, str], int] = {}
    owners = [[index.setdefault((chunk, claim), len(index)) for chunk in chunks] for chunks, claim in
              zip(chunked, claims)]
    items = list(index)
    sizes = [cost(it) for it in items] if cost is not None else [len(a) + len(b) for a, b in items]
    order = sorted(range(len(items)), key=sizes.__getitem__)
    values = np.zeros(len(items), dtype=np.float64)
    batch: list[int] = []
    for i in order + [None]:
        full = i is None or len(batch) == batch_size or (
            cost is not None and batch_cost is not None and batch and sizes[i] * (len(batch) + 1) > batch_cost)
        if full and batch:
            values[batch] = score([items[j] for j in batch])
            batch = []
        if i is not None:
            batch.append(i)
    return np.array([values[o].max() if o else 0.0 for o in owners], dtype=np.float64)


def positive(section: str, values, keys: Sequence[str]) -> None:
    """``check_settings``: each of ``keys`` unset or a positive integer."""
    for key in keys:
        if values.get(key) is not None and values[key] < 1:
            raise InputError(f"config 'faithfulness.{section}.{key}': expected a positive integer, got {values[key]!r}")


def to_device(model, device: str | None):
    """``model`` in float32 on ``device`` (unset: CUDA when there is one), in eval mode."""
    import torch

    from franq.lm.load import resolve_device

    chosen = resolve_device(device)
    return model.to(chosen, dtype=torch.float32).eval(), chosen


class ChunkedVerifier:
    """A published verifier that scores (chunk, claim) inputs and gives each claim the max over
    its document's chunks; a subclass defines ``split(document)`` (the chunks, as its own code
    makes them) and ``score(items)`` (P_supported of a batch), and sets ``batch_size``."""

    needs = frozenset()
    batch_size: int
    device = None

    def split(self, document: str) -> list[str]:
        raise NotImplementedError

    def score(self, items: list[tuple[str, str]]) -> np.ndarray:
        raise NotImplementedError

    def chunks(self, document: str) -> list[str]:
        """The document's chunks (the last 256 documents' kept)."""
        cache = self.__dict__.setdefault("_chunk_cache", {})
        if document not in cache:
            if len(cache) >= 256:
                cache.clear()
            cache[document] = self.split(document)
        return cache[document]

    def inputs(self, encoded) -> dict:
        """A tokenizer's output as the model's inputs, on its device."""
        return {k: v.to(self.device) for k, v in encoded.items()
                if k in ("input_ids", "attention_mask", "token_type_ids")}

    def predict(self, pairs: Sequence[tuple[str, str]], evidence=None) -> np.ndarray:
        """P_supported of each ``(context, claim)``: the max over the context's chunks."""
        if not pairs:
            return np.zeros(0, dtype=np.float64)
        return max_over_chunks([self.chunks(c) for c, _ in pairs], [s for _, s in pairs], self.score,
                               batch_size=self.batch_size)
