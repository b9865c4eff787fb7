"""FRANQ-specific calibration glue: scored answers + labels -> training arrays -> a fitted
calibrator (``calibration/``), and the calibrator a :class:`~franq.pipeline.Franq` applies.

A calibrator records the stack it was fitted for (:func:`stack_key`): the model id, the
faithfulness backend, the two UQ scorers, the prompt version and the answer mode. It is
applied only to the same stack: on a mismatch franq warns and does not apply it
(``on_mismatch="warn"``), refuses (``"error"``), or applies it anyway with a warning
(``"force"``). The shipped default calibrators (``franq/data/calibrator-*.json``) are
picked automatically when one matches the running stack and skipped silently otherwise.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from calibration.base import CalibratorFileError, read_json
from calibration.franq import FranqCalibrator, stack_mismatches
from calibration.metrics import brier_score, expected_calibration_error
from franq.errors import InputError

log = logging.getLogger(__name__)

ON_MISMATCH = ("warn", "error", "force")
DEFAULT_PREFIX = "calibrator-"
RAW_KEYS = ("p_faithful_raw", "p_true_raw")
FRANQ_FEATURES = ("p_faithful", "log_claim_prob", "log_parametric")
"""XGBoost on the FRANQ features: P_faithful, UQ_faith, UQ_unfaith (log scale: trees are
invariant to monotone transforms, and logs keep tiny probabilities apart)."""


class CalibratorMismatchError(InputError):
    """The calibrator was fitted for another stack (model, faithfulness backend, ...)."""


def stack_key(*, model: str, faithfulness: str, uq_faith: str, uq_unfaith: str, mode: str,
              prompt_version: str | None = None) -> dict[str, str]:
    """What a calibrator is fitted for; ``prompt_version`` defaults to the current one."""
    if prompt_version is None:
        from franq.lm.prompts import PROMPT_VERSION

        prompt_version = PROMPT_VERSION
    return {"model": model, "faithfulness": faithfulness, "uq_faith": uq_faith, "uq_unfaith": uq_unfaith,
            "prompt_version": prompt_version, "mode": mode}


# ---------------------------------------------------------------------- applying
class ActiveCalibrator:
    """A loaded calibrator as the pipeline uses it: ``apply`` maps raw components to
    calibrated ``(p_faithful, p_true_if_faithful, p_true_if_unfaithful, p_true)``."""

    def __init__(self, calibrator, *, source: str):
        self.calibrator = calibrator
        self.source = source
        self.is_xgboost = not isinstance(calibrator, FranqCalibrator)
        self.name = "xgboost" if self.is_xgboost else calibrator.name

    def apply(self, p_f: np.ndarray, p_faith: np.ndarray, p_unfaith: np.ndarray,
              features: dict[str, np.ndarray]):
        if not self.is_xgboost:
            return self.calibrator.predict_components(p_f, p_faith, p_unfaith)
        feats = {"p_faithful": p_f, **features}
        missing = [n for n in self.calibrator.feature_names if n not in feats]
        if missing:
            raise InputError(f"calibrator {self.source}: needs feature(s) {missing}, which this stack does "
                             f"not compute (it has {sorted(feats)})")
        X = np.column_stack([feats[n] for n in self.calibrator.feature_names])
        return p_f, p_faith, p_unfaith, self.calibrator.predict(X)


def load_calibrator(path: str | Path):
    """A FRANQ isotonic calibrator or an XGBoost baseline model, by the file's content."""
    obj = read_json(path)
    if "learner" in obj:  # XGBoost's own JSON model format
        from calibration.boosted import XGBoostCalibrator

        return XGBoostCalibrator.from_json(path)
    return FranqCalibrator.from_dict(obj, where=f"calibrator {path}")


def shipped_calibrators() -> list[Path]:
    root = resources.files("franq").joinpath("data")
    return sorted(Path(str(p)) for p in root.iterdir()
                  if p.name.startswith(DEFAULT_PREFIX) and p.name.endswith(".json"))


def default_calibrator_path(stack: dict[str, str]) -> Path | None:
    """The shipped calibrator fitted for exactly this stack, if any."""
    for path in shipped_calibrators():
        try:
            fitted_for = read_json(path).get("fitted_for")
        except CalibratorFileError as exc:
            log.warning("skipping shipped calibrator: %s", exc)
            continue
        if fitted_for == stack:
            return path
    return None


def resolve_calibrator(setting: str | None, stack: dict[str, str], *, on_mismatch: str = "warn"
                       ) -> tuple[ActiveCalibrator | None, tuple[str, ...]]:
    """The calibrator to apply and any warnings for the results. ``setting``: ``None`` or
    ``"none"`` = no calibration; ``"default"`` = the shipped one matching ``stack``, if
    any; else a path to a calibrator file."""
    if on_mismatch not in ON_MISMATCH:
        raise InputError(f"'calibrator_mismatch': expected one of {list(ON_MISMATCH)}, got {on_mismatch!r}")
    if setting is None or setting == "none":
        return None, ()
    if setting == "default":
        path = default_calibrator_path(stack)
        if path is None:
            log.info("no shipped calibrator for this stack %s; scores are uncalibrated", stack)
            return None, ()
        log.info("using the shipped calibrator %s", path.name)
        return ActiveCalibrator(load_calibrator(path), source=path.name), ()
    try:
        cal = load_calibrator(setting)
    except (CalibratorFileError, ValueError) as exc:
        raise InputError(f"calibrator: {exc}") from None
    diffs = stack_mismatches(cal.fitted_for or {}, stack)
    if not diffs:
        return ActiveCalibrator(cal, source=setting), ()
    detail = "; ".join(diffs)
    if on_mismatch == "error":
        raise CalibratorMismatchError(f"calibrator {setting} was fitted for another stack ({detail}); refit it "
                                      f"with `franq calibrate` for this stack, or set calibrator_mismatch="
                                      f"'force' / --calibrator-mismatch force to apply it anyway")
    if on_mismatch == "force":
        msg = f"calibrator {setting} applied although it was fitted for another stack ({detail})"
        log.warning(msg)
        return ActiveCalibrator(cal, source=setting), (msg,)
    msg = f"calibrator {setting} NOT applied: it was fitted for another stack ({detail}); scores are uncalibrated"
    log.warning(msg)
    return None, (msg,)


# ---------------------------------------------------------------------- training data
@dataclass(frozen=True)
class TrainingClaims:
    """Labelled, scored claims as arrays, with the stack they were scored by."""

    p_faithful: np.ndarray
    p_true_if_faithful: np.ndarray
    p_true_if_unfaithful: np.ndarray
    is_true: np.ndarray
    is_faithful: tuple[bool | None, ...]
    components: dict[str, np.ndarray]
    stack: dict[str, str]
    skipped: dict[str, int] = field(default_factory=dict)
    groups: np.ndarray | None = None
    """Per claim, the index of its answer (record) in the input: for grouped splits."""

    def __len__(self) -> int:
        return len(self.is_true)

    def subset(self, mask: np.ndarray) -> TrainingClaims:
        """The claims where ``mask`` is true (e.g. the answers of one cross-validation fold)."""
        idx = np.flatnonzero(mask)
        return dataclasses.replace(
            self, p_faithful=self.p_faithful[idx], p_true_if_faithful=self.p_true_if_faithful[idx],
            p_true_if_unfaithful=self.p_true_if_unfaithful[idx], is_true=self.is_true[idx],
            is_faithful=tuple(self.is_faithful[i] for i in idx),
            components={k: v[idx] for k, v in self.components.items()},
            groups=None if self.groups is None else self.groups[idx])

    def features(self, names: Iterable[str]) -> np.ndarray:
        cols = []
        for n in names:
            if n == "p_faithful":
                cols.append(self.p_faithful)
            elif n in self.components:
                cols.append(self.components[n])
            else:
                raise InputError(f"feature '{n}' is not in the scored claims (they have "
                                 f"{sorted(['p_faithful', *self.components])})")
        return np.column_stack(cols)


def _need(obj: dict, key: str, where: str, kind=str):
    v = obj.get(key)
    if not isinstance(v, kind) or isinstance(v, bool):
        raise InputError(f"{where}: '{key}' must be a {kind.__name__}, got {type(v).__name__}")
    return v


def training_claims(records: Iterable[tuple[str, dict]], *, uq_faith: str = "claim_prob",
                    uq_unfaith: str = "parametric") -> TrainingClaims:
    """Collect the scored claims labelled ``is_true`` from ``franq score`` output records
    (``(where, record)`` pairs). Raw (uncalibrated) values are used: the claim's
    ``components`` carry the raw scorer values and, for calibrated output, ``p_faithful_raw``."""
    p_f, a, b, y, gold, groups = [], [], [], [], [], []
    comps: list[dict[str, float]] = []
    stack = None
    skipped = {"not_scored": 0, "unlabelled": 0}
    for n_rec, (where, rec) in enumerate(records):
        key = {"model": _need(rec, "model", where), "faithfulness": _need(rec, "faithfulness", where),
               "mode": _need(rec, "mode", where)}
        if stack is None:
            stack = key
        elif key != stack:
            diff = [f"{k}: {stack[k]!r} vs {key[k]!r}" for k in key if key[k] != stack[k]]
            raise InputError(f"{where}: scored by another stack than the first record ({'; '.join(diff)}); "
                             f"calibrate one stack at a time")
        for i, c in enumerate(_need(rec, "claims", where, list)):
            cw = f"{where}: claims[{i}]"
            if not isinstance(c, dict):
                raise InputError(f"{cw}: expected an object, got {type(c).__name__}")
            if c.get("status") != "scored":
                skipped["not_scored"] += 1
                continue
            label = c.get("is_true")
            if label is None:
                skipped["unlabelled"] += 1
                continue
            if not isinstance(label, bool):
                raise InputError(f"{cw}: 'is_true' must be true, false or null, got {type(label).__name__}")
            faithful = c.get("is_faithful")
            if faithful is not None and not isinstance(faithful, bool):
                raise InputError(f"{cw}: 'is_faithful' must be true, false or null, got {type(faithful).__name__}")
            comp = c.get("components")
            if not isinstance(comp, dict):
                raise InputError(f"{cw}: 'components' must be an object of raw scorer values")
            for name in (uq_faith, uq_unfaith):
                if not isinstance(comp.get(name), (int, float)):
                    raise InputError(f"{cw}: 'components.{name}' is missing; was this scored by franq with "
                                     f"the {name} scorer?")
            raw_pf = comp.get("p_faithful_raw", c.get("p_faithful"))
            if not isinstance(raw_pf, (int, float)) or isinstance(raw_pf, bool):
                raise InputError(f"{cw}: 'p_faithful' must be a number, got {type(raw_pf).__name__}")
            p_f.append(float(raw_pf))
            a.append(float(comp[uq_faith]))
            b.append(float(comp[uq_unfaith]))
            y.append(float(label))
            gold.append(faithful)
            groups.append(n_rec)
            comps.append({k: float(v) for k, v in comp.items()
                          if k not in RAW_KEYS and isinstance(v, (int, float)) and not isinstance(v, bool)})
    if stack is None or not y:
        raise InputError(f"no scored claims labelled 'is_true' in the input (skipped: {skipped}); "
                         f"label claims with \"is_true\": true/false")
    common = set.intersection(*(set(c) for c in comps))
    components = {k: np.array([c[k] for c in comps]) for k in sorted(common)}
    return TrainingClaims(np.array(p_f), np.array(a), np.array(b), np.array(y), tuple(gold), components,
                          stack_key(uq_faith=uq_faith, uq_unfaith=uq_unfaith, **stack), skipped,
                          np.array(groups))


def read_scored(path: str | Path) -> Iterable[tuple[str, dict]]:
    """``(where, record)`` for each non-blank line of a ``franq score`` output file."""
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as exc:
                raise InputError(f"{path} line {n}: not valid JSON ({exc})") from None
            if not isinstance(obj, dict):
                raise InputError(f"{path} line {n}: expected a JSON object")
            yield f"{path} line {n}", obj


def is_scored_record(obj: dict) -> bool:
    """``franq score`` output (has ``mode`` and scored claims) rather than a raw example."""
    return "mode" in obj and "model" in obj and "passages" not in obj


# ---------------------------------------------------------------------- fitting
def fit_franq_calibrator(data: TrainingClaims, *, variant: str = "condition",
                         calibrate_faithfulness: bool = False,
                         min_per_condition: int = 30, description: str = "") -> tuple[FranqCalibrator, dict]:
    """Fit and return the calibrator and its fit report (counts per condition, train ECE
    before/after, warnings, fit seconds)."""
    cal = FranqCalibrator(variant=variant, calibrate_faithfulness=calibrate_faithfulness,
                          min_per_condition=min_per_condition, fitted_for=data.stack, description=description)
    t0 = time.perf_counter()
    cal.fit(data.p_faithful, data.p_true_if_faithful, data.p_true_if_unfaithful, data.is_true,
            is_faithful=data.is_faithful)
    seconds = time.perf_counter() - t0
    report = {"kind": "franq-isotonic", "variant": cal.name, "fitted_for": data.stack,
              "n_claims": len(data), "n_true": int(data.is_true.sum()),
              "n_false": int(len(data) - data.is_true.sum()), "skipped": data.skipped,
              "counts": cal.counts_, "train_ece": {k: round(v, 4) for k, v in cal.train_ece_.items()},
              "fit_seconds": round(seconds, 4), "warnings": list(cal.warnings_)}
    return cal, report


def fit_xgboost(data: TrainingClaims, *, features: str = "franq", n_estimators: int = 100):
    """XGBoost baseline on the FRANQ features or on all UQ components (paper section 3)."""
    from calibration.boosted import XGBoostCalibrator

    names = list(FRANQ_FEATURES) if features == "franq" else sorted(data.components)
    if features not in ("franq", "all"):
        raise InputError(f"'features' must be 'franq' or 'all', got {features!r}")
    X = data.features(names)
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
