"""The verifier model: a three-way cross-encoder (supported / contradicted / not mentioned).

The format (what ``franq fit verifier`` writes and :class:`Verifier` reads) is a directory:

    config.json          a Hugging Face BertForSequenceClassification config, num_labels 3,
                         id2label {"0": "supported", "1": "contradicted", "2": "not_mentioned"}
    model.safetensors    its weights (fp16 or fp32)
    tokenizer.json / vocab.txt / tokenizer_config.json / special_tokens_map.json
    card.json            {"format": "franq-verifier", "version": 1, "labels": [...],
                         "max_length": tokens per (window, claim) pair it was trained at,
                         "window_words": int, "window_overlap_sentences": int,
                         "aggregation": {"rule": ..., "relevance": ...} (optional),
                         "data": [...], "training": {...}, "dev_metrics": {...}}
    CARD.md              the same for people

Input order: ``tokenizer(premise_window, claim)``. Loaded once (local files only, never a
download; every Verifier of the same files, device and dtype in a process shares one copy
of the weights: the faithfulness backend and the equivalence judge), run on CPU or CUDA,
pairs de-duplicated, sorted by length and batched under a padded-token budget, so memory
is bounded however long the passages are.
"""
from __future__ import annotations

import math
import logging
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import torch

from franq import files
from franq.errors import InputError, ModelNotFoundError
from franq.lm.load import check_model_dir, checkpoint_error, first_line, resolve_device
from franq.types import EvidenceWindow
from franq.verifier.aggregate import DEFAULT_RULE, RELEVANCE, aggregate, check_rule
from franq.verifier.windows import closest_windows, fit_windows, windows

log = logging.getLogger(__name__)

FORMAT = "franq-verifier"
VERSION = 1
LABELS = ("supported", "contradicted", "not_mentioned")
PAIR_OVERHEAD = 3  # [CLS] A [SEP] B [SEP]
MAX_CLAIM_SHARE = 0.5  # a claim longer than half the pair budget is cut to it


def shipped_verifier_dir() -> Path:
    """``franq/data/verifier``: the verifier shipped with franq."""
    return Path(str(resources.files("franq").joinpath("data", "verifier")))


@dataclass(frozen=True)
class ClaimVerdict:
    """One claim against its passages: the three probabilities (summing to 1) and the
    window they were read from (None when the passages had no text)."""

    p_supported: float
    p_contradicted: float
    p_not_mentioned: float
    evidence: EvidenceWindow | None


CARD_RANGES = {"max_length": (16, 8192), "window_words": (1, 100_000), "window_overlap_sentences": (0, 100)}
"""The card's integer fields and their ranges (a 1-token pair budget or a negative window is a broken card)."""


def read_card(directory: Path) -> dict:
    path = directory / "card.json"
    if not path.is_file():
        raise ModelNotFoundError(f"verifier: {directory} has no card.json (a franq verifier directory holds "
                                 "config.json, model.safetensors, the tokenizer files and card.json)")
    card = files.read_json_file(path, what="verifier card")  # bounded (artefact_bytes), strict JSON
    if not isinstance(card, dict) or card.get("format") != FORMAT or card.get("version") != VERSION:
        raise InputError(f"verifier: {path}: expected 'format' {FORMAT!r} and 'version' {VERSION}, got "
                         f"{card.get('format') if isinstance(card, dict) else type(card).__name__!r}")
    for key, (low, high) in CARD_RANGES.items():
        check_count(card.get(key), f"verifier: {path}: '{key}'", low, high)
    return card


def _scaling(card: dict, directory: Path) -> tuple[torch.Tensor, torch.Tensor] | None:
    """The card's ``calibration`` (vector scaling: one scale and bias per label, in LABELS
    order), checked: three finite numbers each, scales positive; None where the card has none."""
    cal = card.get("calibration")
    if cal is None:
        return None
    ok = isinstance(cal, dict) and cal.get("method") == "vector_scaling" and all(
        isinstance(cal.get(k), list) and len(cal[k]) == 3 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in cal[k])
        for k in ("scale", "bias"))
    if not ok or min(cal["scale"]) <= 0:
        raise InputError(f"verifier: {directory}/card.json: 'calibration' must be {{'method': 'vector_scaling', "
                         "'scale': three positive numbers, 'bias': three numbers}")
    return torch.tensor(cal["scale"], dtype=torch.float32), torch.tensor(cal["bias"], dtype=torch.float32)


def check_count(v, where: str, low: int, high: int) -> int:
    """``v`` when it is a whole number in ``[low, high]``, else a one-line error naming ``where``."""
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
        raise InputError(f"{where} must be a whole number from {low} to {high}, got {v!r:.40}")
    return v


def check_weights(directory: Path, model, info: dict) -> None:
    """Every tensor the model expects was in the weights file, and every weight is finite:
    a missing tensor would otherwise be filled with random numbers and score about 1/3
    everywhere, silently."""
    weights = next(f for f in ("model.safetensors", "pytorch_model.bin") if (directory / f).is_file())
    missing = [k for k in info.get("missing_keys", ()) if "position_ids" not in k]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise InputError(f"verifier: {directory / weights} has no tensor {missing[0]!r}{more}; the file is "
                         "incomplete or for another architecture (refit or copy the verifier again)")
    for name, tensor in model.state_dict().items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise InputError(f"verifier: {directory / weights}: tensor {name!r} holds NaN or infinite values")


class _Loaded:
    """A tokenizer and model, shared by every :class:`Verifier` of the same files, device and
    dtype in this process (the faithfulness backend and the equivalence judge: one copy)."""

    def __init__(self, tokenizer, model):
        self.tokenizer, self.model = tokenizer, model


_LOADED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _load(directory: Path, device: torch.device, dtype: torch.dtype) -> _Loaded:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    weights = next((directory / f for f in ("model.safetensors", "pytorch_model.bin") if (directory / f).is_file()))
    stat = weights.stat()
    key = (str(directory.resolve()), stat.st_mtime_ns, stat.st_size, str(device), str(dtype))
    loaded = _LOADED.get(key)
    if loaded is not None:
        return loaded
    try:
        tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
        model, info = AutoModelForSequenceClassification.from_pretrained(
            directory, local_files_only=True, output_loading_info=True)
    except OSError as exc:
        raise ModelNotFoundError(f"verifier: cannot load {directory}: {first_line(exc)}") from None
    except Exception as exc:  # noqa: BLE001 - transformers raises many types for a broken directory
        raise checkpoint_error("verifier", directory, exc) from None
    check_weights(directory, model, info)
    model.to(device, dtype=dtype).eval()
    loaded = _LOADED[key] = _Loaded(tokenizer, model)
    return loaded


class Verifier:
    """Load once from a local directory (default: the shipped one); :meth:`predict` scores
    ``(premise, claim)`` pairs, :meth:`verify` scores claims against whole passages.

    ``window_words`` / ``aggregation``: None = the card's (else 200 words, ``relevant``).
    ``top_windows``: read only the claim's closest windows (None: all).
    ``max_batch_tokens``: padded tokens per forward batch (memory bound)."""

    def __init__(self, path: str | Path | None = None, *, device: str | None = None,
                 max_batch_tokens: int = 8192, window_words: int | None = None,
                 aggregation: str | None = None, relevance: float | None = None, dtype: torch.dtype | None = None,
                 top_windows: int | None = None):
        directory = Path(path) if path is not None else shipped_verifier_dir()
        if not directory.is_dir():
            raise ModelNotFoundError(f"verifier: no directory at {directory}"
                                     + (" (the shipped verifier is not installed; give a verifier model path)"
                                        if path is None else ""))
        check_model_dir(str(directory), "verifier")
        missing = [f for f in ("config.json", "card.json") if not (directory / f).is_file()]
        if not any((directory / f).is_file() for f in ("model.safetensors", "pytorch_model.bin")):
            missing.append("model.safetensors")
        if not any((directory / f).is_file() for f in ("tokenizer.json", "vocab.txt")):
            missing.append("tokenizer.json or vocab.txt")
        if missing:
            raise ModelNotFoundError(f"verifier: {directory} has no {', '.join(missing)} (a franq verifier "
                                     "directory: config.json, model.safetensors, tokenizer files, card.json)")
        self.card = read_card(directory)
        self.device = resolve_device(device)
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # transformers' "Loading weights" bar: franq logs its own line
        dtype = dtype or (torch.float16 if self.device.type == "cuda" else torch.float32)
        self._loaded = _load(directory, self.device, dtype)
        self.tokenizer, self.model = self._loaded.tokenizer, self._loaded.model
        id2label = {int(k): str(v).lower() for k, v in self.model.config.id2label.items()}
        if sorted(id2label.values()) != sorted(LABELS):
            raise InputError(f"verifier: {directory}/config.json: id2label must name {list(LABELS)}, got {id2label}")
        self.order = [next(i for i, lab in id2label.items() if lab == want) for want in LABELS]
        positions = int(getattr(self.model.config, "max_position_embeddings", 512))
        self.max_length = min(int(self.card["max_length"]), positions)
        self.max_batch_tokens = max(int(max_batch_tokens), self.max_length)
        low, high = CARD_RANGES["window_words"]
        self.window_words = check_count(self.card["window_words"] if window_words is None else window_words,
                                        "verifier: window_words", low, high)
        self.overlap_sentences = int(self.card["window_overlap_sentences"])
        agg = self.card.get("aggregation") or {}
        self.aggregation = check_rule(aggregation or agg.get("rule") or DEFAULT_RULE)
        self.relevance = float(relevance if relevance is not None else agg.get("relevance", RELEVANCE))
        self.scaling = _scaling(self.card, directory)
        self.top_windows = None if top_windows is None else check_count(top_windows, "verifier: top_windows", 1, 1000)
        """Read only this many windows per claim, those sharing the most content words with it
        (:func:`franq.verifier.windows.closest_windows`); None: every window."""
        self.path = directory
        self.name = f"verifier:{self.card.get('name') or directory.name}"
        log.info("loaded %s on %s (max_length %d, windows of %d words, %s)", self.name, self.device,
                 self.max_length, self.window_words, self.aggregation)

    # ------------------------------------------------------------------ pairs
    def _n_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    @torch.inference_mode()
    def _forward(self, premises: list[str], claims: list[str]) -> np.ndarray:
        enc = self.tokenizer(premises, claims, padding=True, truncation="longest_first",
                             max_length=self.max_length, return_tensors="pt")
        logits = self.model(**{k: v.to(self.device) for k, v in enc.items()}).logits.float()[:, self.order]
        if self.scaling is not None:  # the card's vector scaling of the log-probabilities (franq.fit.verifier.scaling)
            logits = torch.log_softmax(logits, -1) * self.scaling[0].to(logits.device) + self.scaling[1].to(logits.device)
        return torch.softmax(logits, dim=-1).double().cpu().numpy()

    def predict(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """``(n, 3)`` probabilities (supported, contradicted, not mentioned) of each
        ``(premise, claim)`` pair (a pair over ``max_length`` tokens is truncated)."""
        index: dict[tuple[str, str], int] = {}
        owner = [index.setdefault((str(p), str(c)), len(index)) for p, c in pairs]
        unique = list(index)
        out = np.zeros((len(unique), 3), dtype=np.float64)
        widths = [min(self.max_length, self._n_tokens(p) + self._n_tokens(c) + PAIR_OVERHEAD) for p, c in unique]
        order = sorted(range(len(unique)), key=lambda i: -widths[i])
        start = 0
        while start < len(order):
            size = max(1, self.max_batch_tokens // max(widths[order[start]], 1))
            batch = order[start:start + size]
            out[batch] = self._forward([unique[i][0] for i in batch], [unique[i][1] for i in batch])
            start += size
        return out[owner] if owner else np.zeros((0, 3), dtype=np.float64)

    # ------------------------------------------------------------------ claims against passages
    def _claim_text(self, claim: str) -> str:
        limit = int(self.max_length * MAX_CLAIM_SHARE)
        ids = self.tokenizer(claim, add_special_tokens=False)["input_ids"]
        return claim if len(ids) <= limit else self.tokenizer.decode(ids[:limit])

    def window_probabilities(self, items: Sequence[tuple[Sequence[str], str]], *,
                             titles: Sequence[Sequence[str]] | None = None) -> list[tuple[list, np.ndarray]]:
        """Per ``(passages, claim)``: the windows of all its passages (each read with its
        passage's title in front, when ``titles`` gives one) and their ``(n_windows, 3)``
        probabilities; all windows of all claims batched together."""
        pairs: list[tuple[str, str]] = []
        per_item: list[tuple[list, int, int]] = []
        split: dict[tuple[str, ...], list] = {}  # passages -> their windows (split once per call)
        fitted: dict[tuple[tuple[str, ...], int], list] = {}  # (passages, token budget) -> windows that fit
        lengths: dict[str, int] = {}

        def n_tokens(text: str) -> int:
            if text not in lengths:
                lengths[text] = self._n_tokens(text)
            return lengths[text]

        for k, (passages, claim) in enumerate(items):
            passages = tuple(passages)
            claim = self._claim_text(claim.strip())
            budget = self.max_length - n_tokens(claim) - PAIR_OVERHEAD
            if passages not in split:
                split[passages] = windows(passages, window_words=self.window_words,
                                          overlap_sentences=self.overlap_sentences)
            if (passages, budget) not in fitted:
                fitted[passages, budget] = fit_windows(split[passages], passages, n_tokens, budget)
            ws = fitted[passages, budget]
            if self.top_windows is not None:
                ws = closest_windows(ws, claim, self.top_windows)
            heads = titles[k] if titles is not None else ()
            first = len(pairs)
            for w in ws:
                title = heads[w.passage] if w.passage < len(heads) and heads[w.passage] else ""
                pairs.append((f"{title}. {w.text}" if title else w.text, claim))
            per_item.append((ws, first, len(pairs)))
        probs = self.predict(pairs)
        return [(ws, probs[a:b]) for ws, a, b in per_item]

    def verify(self, items: Sequence[tuple[Sequence[str], str]], *, titles: Sequence[Sequence[str]] | None = None
               ) -> list[ClaimVerdict]:
        """One :class:`ClaimVerdict` per ``(passages, claim)``: the claim read against the
        windows of all its passages (:meth:`window_probabilities`), aggregated by the rule
        (:mod:`franq.verifier.aggregate`)."""
        out = []
        for ws, probs in self.window_probabilities(items, titles=titles):
            p3, best = aggregate(probs, self.aggregation, relevance=self.relevance)
            ev = None if best is None else EvidenceWindow(ws[best].passage, ws[best].start, ws[best].end, ws[best].text)
            out.append(ClaimVerdict(float(p3[0]), float(p3[1]), float(p3[2]), ev))
        return out
