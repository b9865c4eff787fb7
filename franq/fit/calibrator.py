"""Fit a FRANQ calibrator from labelled claims: scored answers + labels -> training arrays
(:class:`~franq.fit.training_claims.TrainingClaims`) -> a fitted calibrator (``calibration/``),
with a held-apart evaluation. ``franq fit calibrator`` is its command; the
calibrate stage that applies the result is :mod:`franq.calibrate`."""
from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

from calibration.franq import FranqCalibrator
from calibration.metrics import brier_score, expected_calibration_error
from calibration.three_condition import ThreeConditionCalibrator
from franq.errors import InputError
from franq.fit.training_claims import TrainingClaims, is_scored_record, read_scored, training_claims
from franq.stages.preset import is_fast_stack


# ---------------------------------------------------------------------- fitting
def fit_franq_calibrator(data: TrainingClaims, *, variant: str = "condition",
                         calibrate_faithfulness: bool = False,
                         min_per_condition: int = 30, description: str = "") -> tuple[FranqCalibrator, dict]:
    """Fit and return the calibrator and its fit report (counts per condition, train ECE
    before/after, warnings, fit seconds)."""
    cal = FranqCalibrator(variant=variant, calibrate_faithfulness=calibrate_faithfulness,
                          min_per_condition=min_per_condition, fitted_for=data.stack, description=description)
    t0 = time.perf_counter()
    cal.fit(data.inputs(), data.is_true, is_faithful=data.is_faithful, groups=data.groups, natural=data.natural)
    return cal, _fit_report("franq-isotonic", cal, data, time.perf_counter() - t0)


def _fit_report(kind: str, cal, data: TrainingClaims, seconds: float) -> dict:
    """The fit report of an isotonic FRANQ calibrator (binary or three-condition)."""
    return {"kind": kind, "variant": cal.name, "fitted_for": data.stack, "n_claims": len(data),
            "n_true": int(data.is_true.sum()), "n_false": int(len(data) - data.is_true.sum()), "skipped": data.skipped,
            "counts": cal.counts_, "train_ece": {k: round(v, 4) for k, v in cal.train_ece_.items()},
            "fit_seconds": round(seconds, 4), "warnings": list(cal.warnings_), "knowledge_check": cal.knowledge_check_,
            "n_synthetic": int((~data.natural).sum())}


def fit_three_condition_calibrator(data: TrainingClaims, *, variant: str = "condition", min_per_condition: int = 30,
                                   description: str = "", conditions=None, flat: tuple[str, ...] = (),
                                   natural=None) -> tuple[ThreeConditionCalibrator, dict]:
    """Fit three-condition FRANQ (P_s * T_s + P_c * T_c + P_n * T_n) on claims scored by a
    backend that gives P_contradicted (the verifier). ``conditions``: gold three-way labels
    per claim (default: from ``is_faithful``, :meth:`TrainingClaims.conditions`); ``flat``:
    conditions whose map is their share of true claims (no UQ dependence); ``natural``: the
    claims the knowledge map's ranking check reads (a mask; default: those not labelled
    ``synthetic``), drawn by answer."""
    if data.p_contradicted is None:
        raise InputError(f"three-condition calibration needs claims scored with P_contradicted and "
                         f"P_not_mentioned; these were scored by {data.stack.get('faithfulness')!r}, which gives "
                         f"P_faithful only: score them with the 'verifier' faithfulness backend")
    cal = ThreeConditionCalibrator(variant=variant, min_per_condition=min_per_condition, fitted_for=data.stack,
                                   description=description, flat=flat)
    t0 = time.perf_counter()
    cal.fit(data.inputs(), data.is_true, condition=data.conditions() if conditions is None else conditions,
            groups=data.groups, natural=data.natural if natural is None else natural)
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
