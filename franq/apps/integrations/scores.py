"""What every adapter reports of one scored answer, with no framework imported.

* A claim's value is its P(true): ``p_true_calibrated``, else ``p_true_raw``.
* A claim's label is its verdict; a claim whose verdict is ``"uncertain"`` is labelled
  ``"uncertain"``. A result scored without a threshold (no claim has a verdict: the default
  and ``"fast"`` scorers) gets franq's verdicts at the adapter's threshold
  (:func:`franq.with_verdicts`, as ``franq score --threshold`` gives them), so ``uncertain``
  reaches the adapters whatever the scorer was configured with; a claim that was not scored
  (a heading, an unaligned claim) has no value and the label ``"not_scored"``.
* The answer's value is the lowest P(true) of its claims, leaving out the uncertain and the
  unscored ones (an answer is as reliable as its weakest claim); when no claim is left, the
  value is None and the label ``"uncertain"``. The reason names the weakest claim.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from franq import AnswerScore, ClaimScore, InputError, with_verdicts

UNCERTAIN = "uncertain"
NOT_SCORED = "not_scored"
DEFAULT_THRESHOLD = 0.5


def need(module: str, extra: str, what: str):
    """Import ``module`` or, when its package is missing or too old to hold it, fail in one
    line naming the pip extra (and the version found)."""
    import importlib
    import importlib.metadata

    top = module.split(".")[0]
    try:
        return importlib.import_module(module)
    except ImportError as err:
        if err.name and err.name.split(".")[0] != top:
            raise  # the framework is there but one of its own imports failed: its error says which
        dists = importlib.metadata.packages_distributions().get(top, [])
        found = [f"{d} {importlib.metadata.version(d)}" for d in dists]
        lacks = f" ({', '.join(found)} installed, without {module})" if found else ""
        raise ImportError(f"franq's {what} adapter needs {top}{lacks}: pip install 'franq[{extra}]'") from None


def scorer_of(scorer: Any) -> Callable[[str, Sequence, str], AnswerScore]:
    """``scorer`` as a callable ``(question, passages, answer) -> AnswerScore``: a
    :class:`franq.Franq` (its ``score``), any such callable, None: the embedded default
    pipeline, or ``"fast"``: the fast preset (the verifier alone, calibrated; no causal LM),
    each loaded at the first call."""
    if scorer is None or scorer == "fast":
        mode = None if scorer is None else "fast"

        def default(question, passages, answer):
            import franq

            return franq.score(question, passages, answer, mode=mode)
        return default
    if callable(getattr(scorer, "score", None)) and hasattr(scorer, "config"):  # a franq.Franq
        return scorer.score
    if callable(scorer):
        return scorer
    raise InputError(f"scorer: expected a franq.Franq or a callable (question, passages, answer) -> AnswerScore "
                     f"(or 'fast'), got {type(scorer).__name__}")


def as_passages(context: Any) -> list:
    """Retrieved context as franq reads passages: one string is one passage; a list (of
    strings, dicts or documents) is passed on; None is no passage (closed book)."""
    if context is None:
        return []
    if isinstance(context, str) or not isinstance(context, Sequence):
        return [context]
    return list(context)


def claim_value(claim: ClaimScore) -> float | None:
    """P(true) of a claim: calibrated when a calibrator ran, else the raw mix."""
    return claim.p_true_calibrated if claim.p_true_calibrated is not None else claim.p_true_raw


def claim_label(claim: ClaimScore, threshold: float = DEFAULT_THRESHOLD) -> str:
    if getattr(claim, "verdict", None) == UNCERTAIN:
        return UNCERTAIN
    value = claim_value(claim)
    if claim.status != "scored" or value is None:
        return NOT_SCORED
    if claim.verdict is not None:
        return claim.verdict
    return "likely_true" if value >= threshold else "likely_false"


@dataclass(frozen=True)
class ClaimSummary:
    index: int
    text: str
    value: float | None
    label: str

    def to_dict(self) -> dict:
        return {"index": self.index, "text": self.text, "p_true": self.value, "label": self.label}


@dataclass(frozen=True)
class AnswerSummary:
    """One answer as the adapters report it: ``value`` (min P(true) over the claims that
    count, None when none does), ``label``, ``reason`` (naming the weakest claim), ``claims``."""

    value: float | None
    label: str
    reason: str
    claims: tuple[ClaimSummary, ...]
    weakest: ClaimSummary | None

    def to_dict(self) -> dict:
        return {"score": self.value, "label": self.label, "reason": self.reason,
                "claims": [c.to_dict() for c in self.claims]}


def summarize(result: AnswerScore, threshold: float = DEFAULT_THRESHOLD) -> AnswerSummary:
    """The per-answer value, label and reason of ``result`` (module docstring)."""
    if any(c.status == "scored" for c in result.claims) and all(c.verdict is None for c in result.claims):
        result = with_verdicts(result, threshold)  # scored without a threshold: franq's rule at this one
    claims = tuple(ClaimSummary(i, c.claim.text, claim_value(c) if c.status == "scored" else None,
                                claim_label(c, threshold)) for i, c in enumerate(result.claims))
    counted = [c for c in claims if c.label not in (UNCERTAIN, NOT_SCORED)]
    uncertain = sum(c.label == UNCERTAIN for c in claims)
    left_out = f"; {uncertain} uncertain claim(s) left out" if uncertain else ""
    if not counted:
        reason = (f"no claim could be judged ({len(claims)} claim(s): {uncertain} uncertain, "
                  f"{len(claims) - uncertain} not scored)")
        return AnswerSummary(None, UNCERTAIN, reason, claims, None)
    weakest = min(counted, key=lambda c: c.value)
    label = "likely_true" if weakest.value >= threshold else "likely_false"
    reason = (f"weakest claim #{weakest.index} {weakest.text!r}: P(true) = {weakest.value:.2f} "
              f"({weakest.label}){left_out}")
    return AnswerSummary(weakest.value, label, reason, claims, weakest)


def pick(mapping: Mapping, names: Sequence[str], what: str, *, required: bool = True) -> Any:
    """The first of ``names`` in ``mapping``; none (when required): one line naming them."""
    for name in names:
        if name in mapping:
            return mapping[name]
    if required:
        raise InputError(f"{what}: expected one of {list(names)}, got keys {sorted(map(str, mapping))}")
    return None
