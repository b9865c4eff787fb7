"""Does a calibrator's knowledge term rank truth at all? (issue 45 item 2)

The knowledge map (P(true | not mentioned) of a three-condition calibrator, P(true | not
supported) of a binary one) is an isotonic map of UQ_unfaith: monotone, so it cannot rank
claims better than UQ_unfaith does. Its steps can still spread from .3 to .9 on a score
that carries no signal (the long calibrator's did: the embedded model's p(c | x) ranks
ExpertQA claims by their length, experiments/2026-11-29-knowledge-term-length). So at fit
time the calibrator records how well the score ranks the claims the map is for: the
weighted AUROC of UQ_unfaith for truth on its natural fitting claims (synthetic
corruptions left out: a generator's own edits are easy to tell), with a 90% bootstrap
interval by answer. No parameter is fitted in it (the map's direction is fixed), so it is not
an in-sample fit statistic. The ``uncertain`` verdict reads it: a knowledge term whose
interval reaches down to 0.5 carries no usable signal (:func:`franq.verdicts.no_signal`).

    >>> check = knowledge_check(log_uq_unfaith, is_true, weights, groups)
    >>> check["auroc"], check["low"], check["high"]
"""
from __future__ import annotations

from typing import Any

import numpy as np

from calibration.base import CalibratorFileError

DRAWS = 1000
"""Bootstrap draws of the interval (answers drawn with replacement)."""

LEVEL = 0.90
"""The interval's coverage."""

MIN_EACH = 5.0
"""Fewer weighted true or false claims than this: no check (the map is then read by its
steps alone, as for files fitted before the check)."""


def weighted_auroc(score: np.ndarray, y: np.ndarray, w: np.ndarray) -> float | None:
    """AUROC of ``score`` for ``y`` with claim weights ``w``: the weighted share of (true,
    false) pairs the score orders rightly, ties half (None when a class has no weight)."""
    return _Ranked(score, y).auroc(w)


class _Ranked:
    """Claims sorted once by score, with their ties, so that each bootstrap draw (new weights:
    the old ones times how often each claim's answer was drawn) costs O(n)."""

    def __init__(self, score: np.ndarray, y: np.ndarray):
        self.order = np.argsort(score, kind="mergesort")
        self.y = np.asarray(y, dtype=bool)[self.order]
        self.start = np.unique(np.asarray(score)[self.order], return_index=True)[1]

    def auroc(self, w: np.ndarray) -> float | None:
        ww = np.asarray(w, dtype=np.float64)[self.order]
        pos, neg = ww * self.y, ww * ~self.y
        total_pos, total_neg = pos.sum(), neg.sum()
        if total_pos <= 0 or total_neg <= 0:
            return None
        neg_tie, pos_tie = np.add.reduceat(neg, self.start), np.add.reduceat(pos, self.start)
        neg_below = np.concatenate([[0.0], np.cumsum(neg_tie)[:-1]])
        return float((pos_tie * (neg_below + 0.5 * neg_tie)).sum() / (total_pos * total_neg))


def knowledge_check(score: Any, y: Any, weights: Any, groups: Any = None, *, draws: int = DRAWS,
                    level: float = LEVEL, seed: int = 0) -> dict | None:
    """``{"auroc", "low", "high", "claims", "weight", "answers", "level"}``: the weighted AUROC
    of ``score`` (the knowledge map's input, higher = more likely true) for labels ``y`` with
    ``weights`` (the map's fitting weights), and its ``level`` bootstrap interval drawing
    ``groups`` (answers; default: each claim its own) with replacement. None when the weighted
    true or false claims number fewer than :data:`MIN_EACH`, or when over a tenth of the draws hold one class
    only (a few answers hold all the claims of one class)."""
    score, y, w = (np.asarray(v, dtype=np.float64) for v in (score, y, weights))
    keep = w > 0
    score, y, w = score[keep], y[keep] > 0.5, w[keep]
    g = np.arange(len(score)) if groups is None else np.asarray(groups)[keep]
    if min((w * y).sum(), (w * ~y).sum()) < MIN_EACH:
        return None
    ranked = _Ranked(score, y)
    auroc = ranked.auroc(w)
    _, inverse = np.unique(g, return_inverse=True)
    n_groups = int(inverse.max()) + 1
    rng = np.random.default_rng(seed)
    boot = [a for a in (ranked.auroc(w * np.bincount(rng.integers(0, n_groups, n_groups), minlength=n_groups)[inverse])
                        for _ in range(draws)) if a is not None]
    if len(boot) < 0.9 * draws:  # many draws missed a class: too few answers to draw from
        return None
    tail = (1.0 - level) / 2
    low, high = (float(np.quantile(boot, q)) for q in (tail, 1.0 - tail))
    return {"auroc": round(auroc, 4), "low": round(low, 4), "high": round(high, 4), "claims": int(keep.sum()),
            "weight": round(float(w.sum()), 3), "answers": n_groups, "level": level}


def fit_check(log_scores: np.ndarray, y: np.ndarray, weights: np.ndarray, groups: Any = None, natural: Any = None
              ) -> dict | None:
    """:func:`knowledge_check` of a knowledge map being fitted: ``log_scores`` (its input),
    labels ``y`` and its fitting ``weights`` of every training claim, read on the claims the
    boolean mask ``natural`` marks (default: all) and drawn by ``groups``."""
    n = len(log_scores)
    mask = np.ones(n, dtype=bool) if natural is None else np.asarray(natural, dtype=bool)
    if mask.shape != (n,):
        raise ValueError(f"'natural' must be one boolean per claim ({n}), got shape {mask.shape}")
    return knowledge_check(log_scores[mask], y[mask], weights[mask], None if groups is None else np.asarray(groups)[mask])


NOT_MADE = (f"knowledge check not made: fewer than {MIN_EACH:g} (weighted) true or false claims in the knowledge "
            "map's fit; the 'uncertain' verdict reads the map's steps alone")
"""The fit warning when a knowledge map gets no check."""


def check_record(check: dict | None) -> dict:
    """The calibrator file's part for ``check``: none when there is no check (so files fitted
    before it, or without one, read back unchanged)."""
    return {} if check is None else {"knowledge_check": check}


def read_check(obj: Any, where: str) -> dict | None:
    """A calibrator file's ``knowledge_check`` (None when absent), validated."""
    check = obj.get("knowledge_check")
    if check is None:
        return None
    if not isinstance(check, dict) or not all(
            isinstance(check.get(k), (int, float)) and not isinstance(check.get(k), bool) and 0.0 <= check[k] <= 1.0
            for k in ("auroc", "low", "high")):
        raise CalibratorFileError(f"{where}: 'knowledge_check' must hold 'auroc', 'low' and 'high' in [0, 1], got {check!r}")
    return check
