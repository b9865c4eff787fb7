"""The trust suite's metrics (paper 004, section 5), each on one answer, and their aggregates.

    Factuality     = 0.5 Judge + 0.2 FakeOverlap + 0.3 METEOR
    Robustness     = 0.6 Judge + 0.2 cosine similarity (all-MiniLM-L6-v2) + 0.2 token F1
    Accountability = F1 of the unique cited ids against the gold ids (0 when nothing is cited)

The weights are :class:`Weights` (the paper also tried factuality (0.7, 0.1, 0.2) and
robustness (0.4, 0.3, 0.3)). Answer-content metrics read the answer with its ``[n]``
citation markers removed (and, for the Verify strategy, only its ``Answer:`` line when it
wrote one); accountability reads the markers. A refusal (``I_DECLINE_TO_ANSWER``) is
scored two ways: the paper's "refusal = maximum" (every metric 1) and "refusals left out";
the refusal rate is reported beside both.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

import franq
import franq.evaluation.metrics as metrics
from franq.evaluation.metrics import normalize_answer

_CITE = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")
_ANSWER_LINE = re.compile(r"(?im)^\s*\**answer\**\s*:\s*(.+)$")
_DECLINE = re.compile(r"i[_ ]?decline[_ ]?to[_ ]?answer", re.IGNORECASE)


@dataclass(frozen=True)
class Weights:
    factuality: tuple[float, float, float] = (0.5, 0.2, 0.3)
    """Judge, FakeOverlap, METEOR."""
    robustness: tuple[float, float, float] = (0.6, 0.2, 0.2)
    """Judge, cosine similarity, token F1."""

    def __post_init__(self):
        for name in ("factuality", "robustness"):
            w = getattr(self, name)
            if len(w) != 3 or any(x < 0 for x in w) or not np.isclose(sum(w), 1.0):
                raise franq.InputError(f"weights '{name}': expected three non-negative numbers summing to 1, got {w}")


# ---------------------------------------------------------------- one answer
def cited_ids(text: str) -> list[int]:
    """Unique cited passage numbers in order of first citation: ``[2]``, ``[1][3]``, ``[1, 3]``."""
    out: list[int] = []
    for group in _CITE.findall(text):
        for n in re.split(r"\s*[,;]\s*", group):
            if int(n) not in out:
                out.append(int(n))
    return out


def answer_text(text: str) -> str:
    """The answer a content metric reads: the ``Answer:`` line when there is one (Verify
    writes a check first), without citation markers, whitespace collapsed."""
    lines = _ANSWER_LINE.findall(text)
    body = lines[-1] if lines else text
    return " ".join(_CITE.sub(" ", body).split())


def is_refusal(text: str) -> bool:
    return bool(_DECLINE.search(text))


def _norm_tokens(text: str) -> list[str]:
    return normalize_answer(text).split()


def token_f1(prediction: str, golds: Sequence[str]) -> float:
    """SQuAD token F1 of the normalized answer against the best gold answer."""
    pred = _norm_tokens(prediction)
    best = 0.0
    for g in golds:
        gold = _norm_tokens(g)
        common = sum(min(pred.count(t), gold.count(t)) for t in set(pred) & set(gold))
        if common:
            p, r = common / len(pred), common / len(gold)
            best = max(best, 2 * p * r / (p + r))
    return best


def contains(text: str, phrase: str) -> bool:
    """Does the normalized ``phrase`` occur in the normalized ``text`` as whole words?"""
    p = normalize_answer(phrase)
    return bool(p) and f" {p} " in f" {normalize_answer(text)} "


def judge_match(prediction: str, golds: Sequence[str]) -> float:
    """The offline judge: 1 when a normalized gold answer occurs in the normalized answer."""
    return float(any(contains(prediction, g) for g in golds))


def fake_overlap(prediction: str, fake: str) -> float:
    """1 when the normalized fake answer is *not* in the normalized answer (paper 5.1)."""
    return 0.0 if contains(prediction, fake) else 1.0


def citation_prf(text: str, gold_ids: Sequence[int]) -> tuple[float, float, float]:
    """Precision, recall, F1 of the unique cited ids against ``gold_ids``; all 0 when
    nothing is cited (paper 5.3)."""
    cited, gold = set(cited_ids(text)), set(gold_ids)
    match = len(cited & gold)
    if not cited or not match:
        return 0.0, 0.0, 0.0
    p, r = match / len(cited), match / len(gold)
    return p, r, 2 * p * r / (p + r)


class Meteor:
    """METEOR (Banerjee & Lavie 2005) through nltk: exact, Porter-stem and WordNet-synonym
    matches, best over the gold answers. ``wordnet`` is an nltk WordNet reader, or ``None``
    for METEOR without synonyms (``variant`` says which ran)."""

    def __init__(self, wordnet=None):
        self.wordnet = wordnet if wordnet is not None else _NoSynonyms()
        self.variant = "nltk meteor (exact, Porter stem, WordNet 3.0 synonyms of the stems)" if wordnet is not None else \
            "nltk meteor (exact+stem; no WordNet synonyms)"

    def __call__(self, prediction: str, golds: Sequence[str]) -> float:
        from nltk.translate.meteor_score import meteor_score

        hyp = _norm_tokens(prediction)
        refs = [_norm_tokens(g) for g in golds if _norm_tokens(g)]
        if not hyp or not refs:
            return 0.0
        return float(meteor_score(refs, hyp, wordnet=self.wordnet))


class _NoSynonyms:
    def synsets(self, *args, **kwargs):
        return []


def weighted(weights: tuple[float, float, float], a: float, b: float, c: float) -> float:
    return weights[0] * a + weights[1] * b + weights[2] * c


# ---------------------------------------------------------------- aggregates
def mean_with_refusals(values: Sequence[float], refusals: Sequence[bool], scoring: str) -> np.ndarray:
    """The per-answer values an aggregate averages: ``"max"`` gives a refusal 1.0 (the paper),
    ``"excluded"`` leaves refusals out."""
    v, r = np.asarray(values, dtype=float), np.asarray(refusals, dtype=bool)
    if scoring == "max":
        return np.where(r, 1.0, v)
    if scoring == "excluded":
        return v[~r]
    raise ValueError(f"refusal scoring: expected 'max' or 'excluded', got {scoring!r}")


def bootstrap(values: Sequence[float], *, n: int = 1000, seed: int = 0, level: float = 0.95
              ) -> tuple[float, float, float]:
    """Mean and percentile bootstrap interval over the items (``nan`` for no items): the
    project's one bootstrap (:func:`franq.evaluation.metrics.bootstrap`) of the mean."""
    v = np.asarray(values, dtype=float)
    if not len(v):
        return float("nan"), float("nan"), float("nan")
    return metrics.bootstrap(np.mean, v, n_boot=n, seed=seed, level=level, rowwise=lambda a: a.mean(axis=1))


def detection(labels: Sequence[bool], scores: Sequence[float]) -> dict[str, float]:
    """How well ``scores`` (higher = more likely positive) find the positive ``labels``:
    AUROC, PR-AUC (average precision) and the positive rate; ``nan`` with one class only.
    The project's :func:`~franq.evaluation.metrics.auroc` and
    :func:`~franq.evaluation.metrics.pr_auc` (whose positive class is ``is_true = 0``)."""
    y, s = np.asarray(labels, dtype=bool), np.asarray(scores, dtype=float)
    keep = ~np.isnan(s)
    y, s = y[keep], s[keep]
    if len(set(y.tolist())) < 2:
        return {"auroc": float("nan"), "pr_auc": float("nan"), "positives": int(y.sum()), "n": int(len(y))}
    return {"auroc": metrics.auroc(s, y), "pr_auc": metrics.pr_auc(-s, ~y),
            "positives": int(y.sum()), "n": int(len(y))}
