"""Metrics of answering with faithfulness and selective generation (papers 000 and 003).

Notation of paper 000 section 3, over N answered questions:

    v_i        the method's faithfulness indicator (1 = "answer a_i is faithful")
    V_i        ground truth: the passages support "the answer to q_i is a_i"
    V^SfC_i    ground truth: some answer is supported (the context is sufficient)

    True-Pos     = sum v_i V_i          Pred-Pos = sum v_i
    F-Answerable = sum V^SfC_i          Faithful = sum V_i
    AwF-Precision = True-Pos / Pred-Pos      AwF-Recall = True-Pos / F-Answerable

SfC-Precision / SfC-Recall are the same with V^SfC_i in place of V_i in True-Pos. A
continuous score ``s`` gives ``v = s >= t`` for every threshold ``t``; :func:`pr_curve`
walks them all, :func:`max_f1` is Table 2's number and :func:`pr_auc` Table 7's.

Hard labels (000 Table 7: "The AUC of methods producing a hard label is defined as the
product of the precision and the recall"): when every score is 0 or 1 (Intrinsic
Abstention, a thresholded verdict, the Trivial method) there is one operating point,
``v = score``; :func:`pr_auc` is its precision x recall and :func:`max_f1` its F1 (not the
best of that point and "answer everything", which is the Trivial method's F1). ``hard=``
forces either reading.

Fallback utility (000 appendix F, Theorem 2): ``U = f + rho * Recall * (1 - f / Precision)``
with ``rho = F-Answerable / N`` and ``f`` the fallback's mean utility, under the stated
assumption that the fallback's utility does not depend on ``v`` (F-independence).

Outcomes (003 section 4): each answer is correct, abstained or hallucinated (answered
and wrong); :func:`outcome_split` gives the three shares, stratified by any boolean.
Selective generation: :func:`selective_curve` (coverage vs selective accuracy), its AUC
and the accuracy at a target coverage. Intervals: the project's one bootstrap,
:func:`franq.evaluation.metrics.bootstrap`. Pure numpy; every function takes plain arrays.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def _bool(x) -> np.ndarray:
    return np.asarray(x, dtype=bool)


def _ratio(a: float, b: float) -> float:
    return float(a) / float(b) if b else float("nan")


@dataclass(frozen=True)
class AwFCounts:
    true_pos: int
    pred_pos: int
    f_answerable: int
    faithful: int
    n: int

    @property
    def precision(self) -> float:
        return _ratio(self.true_pos, self.pred_pos)

    @property
    def recall(self) -> float:
        return _ratio(self.true_pos, self.f_answerable)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r > 0 else 0.0


def awf_counts(v, V, V_sfc) -> AwFCounts:
    """The counts of paper 000 section 3 for hard predictions ``v``."""
    v, V, S = _bool(v), _bool(V), _bool(V_sfc)
    if (V & ~S).any():
        raise ValueError("V_i = 1 implies V^SfC_i = 1 (a supported answer exists); got V=1 with V^SfC=0")
    return AwFCounts(int((v & V).sum()), int(v.sum()), int(S.sum()), int(V.sum()), len(v))


def awf_precision_recall(v, V, V_sfc) -> tuple[float, float]:
    """(AwF-Precision, AwF-Recall) of hard predictions ``v``."""
    c = awf_counts(v, V, V_sfc)
    return c.precision, c.recall


def sfc_precision_recall(v, V_sfc) -> tuple[float, float]:
    """(SfC-Precision, SfC-Recall): AwF with V^SfC in place of V in True-Pos."""
    return awf_precision_recall(v, V_sfc, V_sfc)


def pr_curve(scores, V, V_sfc) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(thresholds, precision, recall) for ``v = scores >= t`` at every distinct score,
    highest threshold first (recall grows along the arrays)."""
    s = np.asarray(scores, dtype=np.float64)
    V, S = _bool(V), _bool(V_sfc)
    awf_counts(np.ones_like(V), V, S)  # validates
    order = np.argsort(-s, kind="stable")
    s_sorted, hit = s[order], V[order].astype(np.int64)
    last = np.r_[np.flatnonzero(np.diff(s_sorted) != 0), len(s) - 1]  # last index of each tie group
    tp = np.cumsum(hit)[last]
    pp = last + 1
    answerable = S.sum()
    recall = tp / answerable if answerable else np.full(len(last), np.nan)
    return s_sorted[last], tp / pp, recall


def is_hard(scores) -> bool:
    """Every score is 0 or 1: a hard label, one operating point (000 Table 7)."""
    s = np.asarray(scores, dtype=np.float64)
    return bool(np.isin(s, (0.0, 1.0)).all())


def _hard_point(scores, V, V_sfc, hard: bool | None) -> AwFCounts | None:
    if hard is None:
        hard = is_hard(scores)
    return awf_counts(np.asarray(scores, dtype=np.float64) >= 0.5, V, V_sfc) if hard else None


def max_f1(scores, V, V_sfc, *, hard: bool | None = None) -> float:
    """The best AwF-F1 over all thresholds (paper 000 Table 2 / 6); a hard label's F1 at
    its one threshold (``hard=None``: when every score is 0 or 1)."""
    point = _hard_point(scores, V, V_sfc, hard)
    if point is not None:
        return point.f1 if point.f_answerable else float("nan")
    _, p, r = pr_curve(scores, V, V_sfc)
    f = np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1), 0.0)
    return float(np.nanmax(f)) if len(f) else float("nan")


def pr_auc(scores, V, V_sfc, *, hard: bool | None = None) -> float:
    """Area under the AwF precision-recall curve (paper 000 Table 7): the step sum
    ``sum (R_k - R_{k-1}) * P_k`` from recall 0. A hard label (``hard=None``: every score
    is 0 or 1) gives precision x recall at ``v = score``, the paper's definition."""
    point = _hard_point(scores, V, V_sfc, hard)
    if point is not None:
        return point.precision * point.recall if point.pred_pos else 0.0 * point.recall
    _, p, r = pr_curve(scores, V, V_sfc)
    return float(np.sum(np.diff(np.r_[0.0, r]) * p))


def fallback_utility(precision: float, recall: float, rho: float, f: float) -> float:
    """``U(M^F) = f + rho * Recall * (1 - f / Precision)`` (000 Theorem 2). Assumes the
    fallback's utility ``f`` is the same whether or not ``v = 1`` (F-independence)."""
    return f + rho * recall * (1 - f / precision)


def fallback_mask(scores, rate: float) -> np.ndarray:
    """Which items fall back at ``rate``: the ``round(rate * n)`` lowest scores (ties by
    position, stable)."""
    s = np.asarray(scores, dtype=np.float64)
    k = int(round(rate * len(s)))
    mask = np.zeros(len(s), dtype=bool)
    mask[np.argsort(s, kind="stable")[:k]] = True
    return mask


def accuracy_at_rate(scores, correct, fallback_correct, rate: float) -> float:
    """Accuracy when the ``rate`` share with the lowest scores takes the fallback's answer
    (000 Table 10: a 20% switch rate to a larger model)."""
    m = fallback_mask(scores, rate)
    return float(np.where(m, _bool(fallback_correct), _bool(correct)).mean())


def threshold_accuracy(scores, correct, fallback_correct, threshold: float) -> float:
    """Accuracy when items with ``score < threshold`` take the fallback's answer."""
    s = np.asarray(scores, dtype=np.float64)
    return float(np.where(s >= threshold, _bool(correct), _bool(fallback_correct)).mean())


OUTCOMES = ("correct", "abstain", "hallucinate")


def outcome_split(correct, abstained) -> dict[str, float]:
    """Shares of correct / abstained / hallucinated (answered and wrong) answers (003)."""
    c, a = _bool(correct), _bool(abstained)
    if (c & a).any():
        raise ValueError("an abstained answer cannot be correct")
    n = len(c)
    if not n:
        return {k: float("nan") for k in OUTCOMES}
    return {"correct": float(c.mean()), "abstain": float(a.mean()), "hallucinate": float((~c & ~a).mean())}


def selective_curve(scores, correct) -> tuple[np.ndarray, np.ndarray]:
    """(coverage, selective accuracy) answering the highest scores first; one point per
    distinct score (ties enter together)."""
    s = np.asarray(scores, dtype=np.float64)
    c = _bool(correct).astype(np.int64)
    order = np.argsort(-s, kind="stable")
    last = np.r_[np.flatnonzero(np.diff(s[order]) != 0), len(s) - 1]
    answered = last + 1
    return answered / len(s), np.cumsum(c[order])[last] / answered


def selective_auc(scores, correct) -> float:
    """Area under coverage (x) vs selective accuracy (y), from coverage 0 with the first
    point's accuracy (a step sum; 000 Table 4, 003 Figure 4)."""
    cov, acc = selective_curve(scores, correct)
    return float(np.sum(np.diff(np.r_[0.0, cov]) * acc))


def accuracy_at_coverage(scores, correct, coverage: float) -> float:
    """Selective accuracy over the ``ceil(coverage * n)`` highest scores (ties by position)."""
    s = np.asarray(scores, dtype=np.float64)
    k = max(1, int(np.ceil(coverage * len(s) - 1e-9)))
    top = np.argsort(-s, kind="stable")[:k]
    return float(_bool(correct)[top].mean())
