"""Labelled, scored claims as training arrays: ``franq score`` output read back with its
labels (:func:`read_scored`) -> :class:`TrainingClaims`, what every calibrator fit reads
(:mod:`franq.fit.calibrator`, the shipped recipes, the benchmarks)."""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from calibration.contract import ClaimInputs
from franq.errors import InputError
from franq.results import OLD_DERIVED, ResultLine, read_results
from franq.scorers.base import primary, probability_of
from franq.stages.preset import uq_scorers


@dataclass(frozen=True)
class TrainingClaims:
    """Labelled, scored claims as arrays, with the stack they were scored by. ``uq_faith``
    and ``uq_unfaith`` are the scorers' primary signals mapped to probabilities (what the
    pipeline mixes); ``signals`` holds every raw signal by its declared name."""

    p_faithful: np.ndarray
    uq_faith: np.ndarray
    uq_unfaith: np.ndarray
    is_true: np.ndarray
    is_faithful: tuple[bool | None, ...]
    signals: dict[str, np.ndarray]
    stack: dict[str, str]
    skipped: dict[str, int] = field(default_factory=dict)
    groups: np.ndarray | None = None
    """Per claim, the index of its answer (record) in the input: for grouped splits."""
    p_contradicted: np.ndarray | None = None
    p_not_mentioned: np.ndarray | None = None
    """P_c and P_n of a faithfulness backend that gives them (the verifier; None otherwise):
    what a three-condition calibrator fits on, with ``p_faithful`` as P_s."""
    condition: tuple[str | None, ...] | None = None
    """Per claim, its ``condition`` label (supported / contradicted / not_mentioned, or None)."""
    synthetic: np.ndarray | None = None
    """Per claim, whether it is labelled ``synthetic`` (a corruption made by editing another
    claim; None: none is): the knowledge check reads the others (:attr:`natural`)."""

    def __len__(self) -> int:
        return len(self.is_true)

    def subset(self, mask: np.ndarray) -> TrainingClaims:
        """The claims where ``mask`` is true (e.g. the answers of one cross-validation fold)."""
        idx = np.flatnonzero(mask)
        return dataclasses.replace(
            self, p_faithful=self.p_faithful[idx], uq_faith=self.uq_faith[idx], uq_unfaith=self.uq_unfaith[idx],
            is_true=self.is_true[idx], is_faithful=tuple(self.is_faithful[i] for i in idx),
            signals={k: v[idx] for k, v in self.signals.items()},
            groups=None if self.groups is None else self.groups[idx],
            p_contradicted=None if self.p_contradicted is None else self.p_contradicted[idx],
            p_not_mentioned=None if self.p_not_mentioned is None else self.p_not_mentioned[idx],
            condition=None if self.condition is None else tuple(self.condition[i] for i in idx),
            synthetic=None if self.synthetic is None else self.synthetic[idx])

    @classmethod
    def join(cls, parts: list[TrainingClaims]) -> TrainingClaims:
        """The claims of ``parts`` (scored by one stack) one after the other; ``groups``
        stay each part's own answer indices, offset so no two parts share one."""
        first = parts[0]
        cat = lambda name: np.concatenate([getattr(p, name) for p in parts])  # noqa: E731
        three = all(p.p_contradicted is not None for p in parts)
        offsets = np.cumsum([0] + [int(p.groups.max()) + 1 if p.groups is not None and len(p.groups) else 0
                                   for p in parts[:-1]])
        groups = (np.concatenate([p.groups + o for p, o in zip(parts, offsets)])
                  if all(p.groups is not None for p in parts) else None)
        conds = (None if all(p.condition is None for p in parts) else
                 sum((p.condition or (None,) * len(p) for p in parts), ()))
        common = set.intersection(*(set(p.signals) for p in parts))
        return dataclasses.replace(
            first, p_faithful=cat("p_faithful"), uq_faith=cat("uq_faith"), uq_unfaith=cat("uq_unfaith"),
            is_true=cat("is_true"), is_faithful=sum((p.is_faithful for p in parts), ()),
            signals={k: np.concatenate([p.signals[k] for p in parts]) for k in sorted(common)},
            skipped={k: sum(p.skipped.get(k, 0) for p in parts) for k in first.skipped}, groups=groups,
            p_contradicted=cat("p_contradicted") if three else None,
            p_not_mentioned=cat("p_not_mentioned") if three else None, condition=conds,
            synthetic=None if all(p.synthetic is None for p in parts) else ~np.concatenate([p.natural for p in parts]))

    @property
    def natural(self) -> np.ndarray:
        """Per claim, whether it is natural (not labelled ``synthetic``): what the knowledge
        check reads."""
        return np.ones(len(self), dtype=bool) if self.synthetic is None else ~self.synthetic

    def conditions(self) -> list[str | None]:
        """Per claim, the gold condition a three-condition fit reads: its ``condition`` label
        where given; else ``supported`` where ``is_faithful`` is true; where it is false,
        whichever of contradicted / not mentioned the verifier finds likelier; None (the
        verifier's argmax) where unknown."""
        out: list[str | None] = []
        for k, g in enumerate(self.is_faithful):
            if self.condition is not None and self.condition[k] is not None:
                out.append(self.condition[k])
            elif g is None:
                out.append(None)
            elif g:
                out.append("supported")
            else:
                out.append("contradicted" if self.p_contradicted[k] > self.p_not_mentioned[k] else "not_mentioned")
        return out

    def franq_features(self) -> list[str]:
        """XGBoost on the FRANQ features: P_faithful and the two scorers' primary signals
        (raw: trees are invariant to monotone maps, and log values keep tiny probabilities apart)."""
        return ["p_faithful", *(primary(s).name for s in uq_scorers(self.stack))]

    def inputs(self) -> ClaimInputs:
        """What a calibrator reads of these claims (:class:`~calibration.contract.ClaimInputs`)."""
        return ClaimInputs(self.p_faithful, self.uq_faith, self.uq_unfaith, p_contradicted=self.p_contradicted,
                           p_not_mentioned=self.p_not_mentioned, signals=self.signals)

    def features(self, names: Iterable[str]) -> np.ndarray:
        try:
            return self.inputs().features(names)
        except ValueError as exc:
            raise InputError(f"the scored claims: {exc}") from None


def training_claims(records: Iterable[ResultLine]) -> TrainingClaims:
    """Collect the scored claims labelled ``is_true`` from ``franq score`` output read back
    (:func:`read_scored`, or ``franq.read_results(..., with_input=True)``). Only raw values
    are read: ``p_faithful`` and the signals the stack's scorers declare (their primary
    signals give ``uq_faith`` / ``uq_unfaith``)."""
    p_f, y, gold, cond, groups, p_c, p_n, made = [], [], [], [], [], [], [], []
    sigs: list[dict[str, float]] = []
    stack = scorers = None
    skipped = {"not_scored": 0, "unlabelled": 0}
    for n_rec, line in enumerate(records):
        where, result, labels = line.where, line.result, _claim_labels(line)
        reasons = [_left_out(c, label) for c, label in zip(result.claims, labels)]
        if all(reasons):  # no labelled claim: the record takes no part (nor names the stack)
            for reason in reasons:
                skipped[reason] += 1
            continue
        key = result.stack.to_dict()
        if stack is None:
            stack = key
            scorers = uq_scorers(stack)
        elif key != stack:
            diff = [f"{k}: {stack.get(k)!r} vs {key.get(k)!r}" for k in sorted(set(key) | set(stack))
                    if key.get(k) != stack.get(k)]
            hint = " (--preset NAME fits on one preset's records)" if key.get("mode") != stack.get("mode") else ""
            raise InputError(f"{where}: scored by another stack than the first record ({'; '.join(diff)}); "
                             f"calibrate one stack at a time{hint}")
        for i, (c, label, reason) in enumerate(zip(result.claims, labels, reasons)):
            if reason:
                skipped[reason] += 1
                continue
            for scorer in scorers:
                name = primary(scorer).name
                if c.signals.get(name) is None:
                    raise InputError(f"{where}: claims[{i}]: 'signals.{name}' is missing; was this scored by "
                                     f"franq with the {scorer.name} scorer?")
            if c.p_faithful is None:
                raise InputError(f"{where}: claims[{i}]: 'p_faithful' must be a number, got null")
            p_f.append(c.p_faithful)
            p_c.append(c.p_contradicted)
            p_n.append(c.p_not_mentioned)
            y.append(float(label["is_true"]))
            cond.append(label.get("condition"))
            made.append(bool(label.get("synthetic")))
            faithful = label.get("is_faithful")  # a condition label says it too
            gold.append(faithful if faithful is not None or cond[-1] is None else cond[-1] == "supported")
            groups.append(n_rec)
            sigs.append({k: v for k, v in c.signals.items() if v is not None and k not in OLD_DERIVED})
    if stack is None or not y:
        raise InputError(f"no scored claims labelled 'is_true' in the input (skipped: {skipped}); "
                         f"label claims with \"is_true\": true/false")
    common = set.intersection(*(set(c) for c in sigs))
    signals = {k: np.array([c[k] for c in sigs]) for k in sorted(common)}
    if scorers:
        faith, unfaith = (probability_of(s, signals[primary(s).name]) for s in scorers)
    else:  # the fast mode: the mix with UQ_faith = 1 and UQ_unfaith = 0 is P_faithful itself
        faith, unfaith = np.ones(len(y)), np.zeros(len(y))
    three = all(v is not None for v in (*p_c, *p_n))
    return TrainingClaims(np.array(p_f), faith, unfaith, np.array(y), tuple(gold), signals, stack, skipped,
                          np.array(groups), np.array(p_c, dtype=np.float64) if three else None,
                          np.array(p_n, dtype=np.float64) if three else None,
                          tuple(cond) if any(c is not None for c in cond) else None,
                          np.array(made) if any(made) else None)


def _claim_labels(line: ResultLine) -> tuple[dict, ...]:
    """Per claim of ``line``, its labels (empty where the record carries none); a short answer
    read whole (one claim) takes the record's own ``is_true`` / ``is_faithful``."""
    ex, n = line.example, len(line.result.claims)
    whole = {k: v for k, v in ((ex and ex.labels) or {}).items() if k in ("is_true", "is_faithful")}
    return (ex and ex.claim_labels) or ((whole,) if whole and n == 1 and line.result.mode == "short" else ({},) * n)


def _left_out(claim, label: dict) -> str | None:
    """Why a fit leaves ``claim`` out (``not_scored`` / ``unlabelled``), or None: the claims
    :func:`training_claims` takes are the scored ones labelled ``is_true``."""
    if claim.status != "scored":
        return "not_scored"
    return "unlabelled" if label.get("is_true") is None else None


def claim_keys(records: Iterable[ResultLine]) -> list[tuple[str | None, int]]:
    """``(record id, claim index)`` of each claim :func:`training_claims` takes from
    ``records``, in its order."""
    return [(line.id, i) for line in records
            for i, (c, label) in enumerate(zip(line.result.claims, _claim_labels(line))) if not _left_out(c, label)]


def read_scored(path: str | Path) -> Iterator[ResultLine]:
    """Each result of a ``franq score`` output file, with its labels (blank lines skipped;
    any other line that is not a result is an :class:`~franq.errors.InputError` naming it)."""
    return read_results(path, with_input=True)


def is_scored_record(obj: dict) -> bool:
    """``franq score`` output (has ``mode`` and scored claims) rather than a raw example."""
    return "mode" in obj and "stack" in obj  # a raw example may not carry these (unknown fields)
