"""From per-window probabilities to one claim's (P_supported, P_contradicted, P_not_mentioned).

A claim is checked against every window of every passage; most windows do not speak about
it at all (high P_not_mentioned), so the rules differ in how they read contradiction:

``relevant`` (default)
    the whole distribution of the most relevant window (lowest P_not_mentioned): the
    window that speaks most about the claim decides it, support and contradiction alike.
``max_support``
    P_s = the highest support of any window; P_c = the highest contradiction among the
    windows that speak about the claim (P_n < ``relevance``, 0.5), or the contradiction of
    the most relevant window (lowest P_n) when none does; P_n = what is left. Support
    anywhere is support (a passage states it); a stray contradiction score from a window
    about something else is ignored. When the two come from different windows and sum
    above 1 both are scaled down, which costs the ranking (below).
``decisive``
    the whole distribution of the most decided window (highest max(P_s, P_c)).
``max``
    P_s = max support, P_c = max contradiction, P_n = min not-mentioned over all windows,
    renormalised.

Every rule returns three non-negative numbers summing to 1 (when P_s + P_c exceed 1 they
are scaled down to sum to 1 and P_n is 0) and the index of the evidence window: for
``relevant`` and ``decisive`` the window that decided; for the max rules the window of the
highest support when P_s >= P_c, else the window the contradiction came from. No
window at all (empty passages): (0, 0, 1) and no evidence. The rule is chosen by name
(``[faithfulness.verifier] aggregation``; a model's card may name its own default); the
choice of default is measured in benchmarks/results/verifier-aggregation.md: with the
shipped verifier ``relevant`` has the best BAcc and AUROC of P_s on both long-evidence sets
(WiCE held out, ExpertQA rand_test) and finds the most contradictions inside long ExpertQA
claims; ``max_support`` was the default before.
"""
from __future__ import annotations

import numpy as np

from franq.errors import InputError

S, C, N = 0, 1, 2
RELEVANCE = 0.5


def _finish(s: float, c: float, n: float | None) -> np.ndarray:
    s, c = max(0.0, float(s)), max(0.0, float(c))
    if n is None:
        if s + c > 1.0:
            return np.array([s / (s + c), c / (s + c), 0.0])
        return np.array([s, c, 1.0 - s - c])
    total = s + c + max(0.0, float(n))
    return np.array([s, c, max(0.0, float(n))]) / total if total > 0 else np.array([0.0, 0.0, 1.0])


def _evidence(p: np.ndarray, out: np.ndarray, c_window: int) -> int:
    return int(np.argmax(p[:, S])) if out[S] >= out[C] else c_window


def max_support(p: np.ndarray, *, relevance: float = RELEVANCE) -> tuple[np.ndarray, int]:
    speaking = np.flatnonzero(p[:, N] < relevance)
    c_window = int(speaking[np.argmax(p[speaking, C])]) if len(speaking) else int(np.argmin(p[:, N]))
    out = _finish(p[:, S].max(), p[c_window, C], None)
    return out, _evidence(p, out, c_window)


def relevant(p: np.ndarray, *, relevance: float = RELEVANCE) -> tuple[np.ndarray, int]:
    k = int(np.argmin(p[:, N]))
    return _finish(*p[k]), k


def decisive(p: np.ndarray, *, relevance: float = RELEVANCE) -> tuple[np.ndarray, int]:
    k = int(np.argmax(p[:, [S, C]].max(axis=1)))
    return _finish(*p[k]), k


def max_each(p: np.ndarray, *, relevance: float = RELEVANCE) -> tuple[np.ndarray, int]:
    out = _finish(p[:, S].max(), p[:, C].max(), p[:, N].min())
    return out, _evidence(p, out, int(np.argmax(p[:, C])))


RULES = {"max_support": max_support, "relevant": relevant, "decisive": decisive, "max": max_each}
DEFAULT_RULE = "relevant"


def check_rule(name: str) -> str:
    if name not in RULES:
        raise InputError(f"aggregation: expected one of {sorted(RULES)}, got {name!r}")
    return name


def aggregate(window_probs, rule: str = DEFAULT_RULE, *, relevance: float = RELEVANCE) -> tuple[np.ndarray, int | None]:
    """``window_probs``: ``(n_windows, 3)`` rows (supported, contradicted, not mentioned) of
    one claim. Returns the claim's three probabilities and the evidence window's index."""
    p = np.asarray(window_probs, dtype=np.float64).reshape(-1, 3)
    if not len(p):
        return np.array([0.0, 0.0, 1.0]), None
    return RULES[check_rule(rule)](p, relevance=relevance)
