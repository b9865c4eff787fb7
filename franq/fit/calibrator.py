"""Fit a FRANQ calibrator from labelled claims: scored answers + labels -> training arrays
(:class:`TrainingClaims`) -> a fitted calibrator (``calibration/``), with a held-apart
evaluation. ``franq fit calibrator`` is its command; the
calibrate stage that applies the result is :mod:`franq.calibrate`."""
from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from calibration.contract import ClaimInputs
from calibration.franq import FranqCalibrator
from calibration.metrics import brier_score, expected_calibration_error
from calibration.three_condition import ThreeConditionCalibrator
from franq.errors import InputError
from franq.results import OLD_DERIVED, ResultLine, read_results
from franq.scorers.base import primary, probability_of
from franq.stages.preset import is_fast_stack, uq_scorers

# ---------------------------------------------------------------------- training data
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
            condition=None if self.condition is None else tuple(self.condition[i] for i in idx))

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
            p_not_mentioned=cat("p_not_mentioned") if three else None, condition=conds)

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
    p_f, y, gold, cond, groups, p_c, p_n = [], [], [], [], [], [], []
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
                          tuple(cond) if any(c is not None for c in cond) else None)


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


# ---------------------------------------------------------------------- fitting
def fit_franq_calibrator(data: TrainingClaims, *, variant: str = "condition",
                         calibrate_faithfulness: bool = False,
                         min_per_condition: int = 30, description: str = "") -> tuple[FranqCalibrator, dict]:
    """Fit and return the calibrator and its fit report (counts per condition, train ECE
    before/after, warnings, fit seconds)."""
    cal = FranqCalibrator(variant=variant, calibrate_faithfulness=calibrate_faithfulness,
                          min_per_condition=min_per_condition, fitted_for=data.stack, description=description)
    t0 = time.perf_counter()
    cal.fit(data.inputs(), data.is_true, is_faithful=data.is_faithful, groups=data.groups)
    return cal, _fit_report("franq-isotonic", cal, data, time.perf_counter() - t0)


def _fit_report(kind: str, cal, data: TrainingClaims, seconds: float) -> dict:
    """The fit report of an isotonic FRANQ calibrator (binary or three-condition)."""
    return {"kind": kind, "variant": cal.name, "fitted_for": data.stack, "n_claims": len(data),
            "n_true": int(data.is_true.sum()), "n_false": int(len(data) - data.is_true.sum()), "skipped": data.skipped,
            "counts": cal.counts_, "train_ece": {k: round(v, 4) for k, v in cal.train_ece_.items()},
            "fit_seconds": round(seconds, 4), "warnings": list(cal.warnings_), "knowledge_check": cal.knowledge_check_}


def fit_three_condition_calibrator(data: TrainingClaims, *, variant: str = "condition", min_per_condition: int = 30,
                                   description: str = "", conditions=None, flat: tuple[str, ...] = (),
                                   natural=None) -> tuple[ThreeConditionCalibrator, dict]:
    """Fit three-condition FRANQ (P_s * T_s + P_c * T_c + P_n * T_n) on claims scored by a
    backend that gives P_contradicted (the verifier). ``conditions``: gold three-way labels
    per claim (default: from ``is_faithful``, :meth:`TrainingClaims.conditions`); ``flat``:
    conditions whose map is their share of true claims (no UQ dependence); ``natural``: the
    claims the knowledge map's ranking check reads (a mask; default: all), drawn by answer."""
    if data.p_contradicted is None:
        raise InputError(f"three-condition calibration needs claims scored with P_contradicted and "
                         f"P_not_mentioned; these were scored by {data.stack.get('faithfulness')!r}, which gives "
                         f"P_faithful only: score them with the 'verifier' faithfulness backend")
    cal = ThreeConditionCalibrator(variant=variant, min_per_condition=min_per_condition, fitted_for=data.stack,
                                   description=description, flat=flat)
    t0 = time.perf_counter()
    cal.fit(data.inputs(), data.is_true, condition=data.conditions() if conditions is None else conditions,
            groups=data.groups, natural=natural)
    return cal, _fit_report("franq-three-condition", cal, data, time.perf_counter() - t0)


def fit_xgboost(data: TrainingClaims, *, features: str = "franq", n_estimators: int = 100):
    """XGBoost baseline on the FRANQ features or on all UQ components (paper section 3)."""
    from calibration.boosted import XGBoostCalibrator

    if features not in ("franq", "all"):
        raise InputError(f"'features' must be 'franq' or 'all', got {features!r}")
    names = data.franq_features() if features == "franq" else ["p_faithful", *sorted(data.signals)]
    data.features(names)  # every feature is there, or an error that names it
    X = data.inputs()
    cal = XGBoostCalibrator(feature_names=names, n_estimators=n_estimators, fitted_for=data.stack)
    t0 = time.perf_counter()
    cal.fit(X, data.is_true)
    seconds = time.perf_counter() - t0
    p = cal.predict(X)
    report = {"kind": "xgboost", "features": names, "fitted_for": data.stack, "n_claims": len(data),
              "n_true": int(data.is_true.sum()), "n_false": int(len(data) - data.is_true.sum()),
              "skipped": data.skipped, "train_ece": {"after": round(expected_calibration_error(p, data.is_true), 4)},
              "train_brier": round(brier_score(p, data.is_true), 4), "fit_seconds": round(seconds, 4),
              "warnings": []}
    return cal, report


def fit_calibrator_file(input_path: str, output: str, *, config=None, variant: str | None = None,
                        calibrate_faithfulness: bool = False, xgb_features: str | None = None,
                        min_per_condition: int = 30, report_path: str | None = None, scored_path: str | None = None,
                        holdout: float | None = None, seed: int = 0, three_condition: bool | None = None,
                        flat: tuple[str, ...] = (), folds: int | None = 5, target_precision: float | None = None,
                        target_false_alarm: float | None = None, prior: float | None = None,
                        preset: str | None = None, echo=print) -> tuple[dict, str]:
    """``franq fit calibrator``: fit on ``input_path`` and write the calibrator to ``output``
    and its fit report (returned, with the report's path). The input is ``franq score``
    output whose claims carry labels, or raw examples with labelled claims, which are
    scored first with ``config`` (its calibrator ignored: raw values are fitted) into
    ``scored_path``. ``holdout``: fit on the rest of the answers and report ECE, Brier and
    AUROC on the held-apart ones. ``three_condition``: fit :class:`ThreeConditionCalibrator`
    (claims scored with the verifier backend; ``variant`` condition, soft or none); None (the
    default): three-condition when the claims carry P_contradicted, as the shipped default
    does. ``folds``: K-fold cross-validation by answer, the threshold table and, with
    ``target_precision`` / ``target_false_alarm``, the threshold stored in the file
    (:mod:`franq.fit.calibrator_cv`); ``prior``: the deployment share of true claims the
    maps are moved to (:mod:`calibration.prior`); ``preset``: fit on the records that preset
    scored only (``--mode auto`` and ``--fast`` output hold two)."""
    from franq.fit.calibrator_cv import (LABELS_REFUSED, choose_threshold, cross_validate, dedupe, holdout_metrics,
                                         label_check, split_holdout, table_rows)
    from franq.fit.shipped_fast import fast_fit_options
    from franq.runners.local import score_file
    from franq.runners.paths import check_distinct

    stem = output.removesuffix(".json").removesuffix(".safetensors")
    report_path = report_path or stem + ".report.json"
    check_distinct({"input": input_path, "output": output, "report": report_path,
                    "scored file (--scored)": scored_path or stem + ".scored.jsonl"})
    with open(input_path, encoding="utf-8") as f:
        first = next((line for line in f if line.strip()), None)
    if first is None:
        raise InputError(f"{input_path}: no records")
    try:
        first_obj = json.loads(first)
    except ValueError as exc:
        raise InputError(f"{input_path} line 1: not valid JSON ({exc})") from None
    if target_precision is not None and target_false_alarm is not None:
        raise InputError("give one of --target-precision and --target-false-alarm, not both")
    if (target_precision is not None or target_false_alarm is not None) and not folds:
        raise InputError("--target-precision / --target-false-alarm pick the threshold on cross-validated P(true): "
                         "leave --folds at 2 or more")
    if three_condition and (xgb_features or calibrate_faithfulness or variant == "calibrated"):
        raise InputError("--three-condition fits variant condition, soft or none, without --xgboost or "
                         "--calibrate-faithfulness")
    if xgb_features:  # fail before scoring anything when xgboost is missing
        from calibration.boosted import require_xgboost

        require_xgboost()
    if not (isinstance(first_obj, dict) and is_scored_record(first_obj)):
        from franq.config import FranqConfig

        scored_path = scored_path or stem + ".scored.jsonl"
        config = (config or FranqConfig()).with_overrides({"calibration.calibrator": "none"})
        Path(scored_path).unlink(missing_ok=True)  # score afresh, as before (no resume here)
        echo(score_file(config, input_path, scored_path).message())
        input_path = scored_path
    lines = dedupe(list(read_scored(input_path)), echo)
    if preset is not None:
        lines = [x for x in lines if x.result.stack.to_dict().get("mode") == preset]
        echo(f"--preset {preset}: {len(lines)} records scored by it")
    data = training_claims(lines)
    if is_fast_stack(data.stack) and not xgb_features:  # --fast output: the fast mode's own kind of map, of P(true)
        three_condition, variant, calibrate_faithfulness = fast_fit_options(three_condition, variant, echo)
        data = dataclasses.replace(data, is_faithful=tuple(bool(v) for v in data.is_true), condition=None)
    if three_condition is None:
        three_condition = (data.p_contradicted is not None and not xgb_features and not calibrate_faithfulness
                           and variant != "calibrated")
        echo(f"fitting the {'three-condition' if three_condition else 'binary FRANQ'} calibrator ("
             + ("the claims carry P_contradicted, as the shipped default's verifier gives" if three_condition else
                "the claims carry no P_contradicted" if data.p_contradicted is None else "the options ask for it")
             + "; --binary / --three-condition to choose)")
    variant = variant or ("soft" if three_condition else "condition")
    if flat and not three_condition:
        raise InputError("--flat applies to three-condition calibrators (claims scored with the verifier)")
    if prior is not None and xgb_features:
        raise InputError("--prior moves the maps of a FRANQ calibrator; an XGBoost model has none")
    held = None
    if holdout is not None:
        data, held = split_holdout(data, holdout, seed=seed)
    if xgb_features:
        if not output.endswith(".json"):
            raise InputError(f"--output: XGBoost models are saved as JSON, the name must end in .json: {output}")
        cal, report = fit_xgboost(data, features=xgb_features)
    elif three_condition:
        cal, report = fit_three_condition_calibrator(data, variant=variant, min_per_condition=min_per_condition,
                                                     flat=flat)
    else:
        cal, report = fit_franq_calibrator(data, variant=variant, calibrate_faithfulness=calibrate_faithfulness,
                                           min_per_condition=min_per_condition)
    if not xgb_features:
        floor = LABELS_REFUSED if min_per_condition >= LABELS_REFUSED else 0  # set lower: fitted, with the warning
        report["warnings"] += label_check(cal.counts_, flat=flat, refused=floor)
    if held is not None:
        report["holdout"] = {"fraction": holdout, "seed": seed, **holdout_metrics(cal, held)}
    elif folds:
        def refit(part):
            if xgb_features:
                return fit_xgboost(part, features=xgb_features)[0]
            if three_condition:
                return fit_three_condition_calibrator(part, variant=variant, min_per_condition=0, flat=flat)[0]
            return fit_franq_calibrator(part, variant=variant, calibrate_faithfulness=calibrate_faithfulness,
                                        min_per_condition=0)[0]

        report["cv"], p_oof, fold = cross_validate(data, refit, folds=folds, seed=seed)
        report["cv"]["thresholds"] = table_rows(p_oof, data.is_true)
        if target_precision is not None or target_false_alarm is not None:
            report["cv"]["chosen"] = choose_threshold(p_oof, data.is_true, fold, target_precision=target_precision,
                                                      target_false_alarm=target_false_alarm)
            if not hasattr(cal, "threshold"):
                raise InputError("--target-precision: XGBoost model files carry no threshold; set "
                                 "calibration.threshold in the config instead")
            cal.threshold = report["cv"]["chosen"]["threshold"]
    if prior is not None:
        cal.prior = prior
        report["prior"] = {"fitted": cal.base_rate, "deployment": prior, "logit_shift": round(cal.prior_shift(), 4)}
    cal.to_json(output)
    report["file_bytes"] = Path(output).stat().st_size
    Path(report_path).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report, report_path
