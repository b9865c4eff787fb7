"""The calibrate stage: the calibrator a :class:`~franq.pipeline.Franq` applies (apply
only; fitting one from labelled claims is :mod:`franq.fit.calibrator`, ``franq fit calibrator``).

A calibrator records the stack it was fitted for (:class:`~franq.types.Stack`, :func:`stack_key`): the model id, the
faithfulness backend, the two UQ scorers, the prompt version and the preset (plus, in
short form, the equivalence judge and the sampling settings). Long and short form are
calibrated the same way: the calibrator maps the raw ``p_faithful``, ``uq_faith`` and
``uq_unfaith`` of a claim to calibrated values. It is
applied only to the same stack: on a mismatch franq warns and does not apply it
(``on_mismatch="warn"``), refuses (``"error"``), or applies it anyway with a warning
(``"force"``). The shipped default calibrators (``franq/data/calibrator-*.json``) are
picked automatically when one matches the running stack and skipped silently otherwise.
"""
from __future__ import annotations

import logging
from importlib import resources
from pathlib import Path

from calibration.base import CalibratorFileError, read_json
from calibration.contract import CalibratedClaims, ClaimInputs
from calibration.franq import FranqCalibrator, stack_mismatches
from calibration.three_condition import FORMAT as THREE_CONDITION_FORMAT
from calibration.three_condition import ThreeConditionCalibrator
from franq.config_checks import CALIBRATOR_MISMATCH
from franq.errors import InputError
from franq.limits import limit_of
from franq.types import CalibratorInfo, Stack

log = logging.getLogger(__name__)

DEFAULT_PREFIX = "calibrator-"


class CalibratorMismatchError(InputError):
    """The calibrator was fitted for another stack (model, faithfulness backend, ...)."""


def stack_key(*, model: str, faithfulness: str, uq_faith: str, uq_unfaith: str, mode: str,
              prompt_version: str | None = None, **extra: str) -> dict[str, str]:
    """What a calibrator is fitted for, as it records it (``fitted_for``): the
    :class:`~franq.types.Stack` of these values as a dict. ``prompt_version`` defaults to
    the current one; ``extra`` holds what only some presets depend on (short form: the
    equivalence judge and the sampling settings)."""
    return Stack.build(model=model, faithfulness=faithfulness, uq_faith=uq_faith, uq_unfaith=uq_unfaith,
                       mode=mode, prompt_version=prompt_version, **extra).to_dict()


# ---------------------------------------------------------------------- applying
class ActiveCalibrator:
    """A loaded calibrator as the pipeline uses it: :meth:`apply` maps a batch's raw values
    (:class:`~calibration.contract.ClaimInputs`) to calibrated ones
    (:class:`~calibration.contract.CalibratedClaims`); :attr:`info` says which file it is.
    Any calibrator of the contract (:class:`~calibration.contract.Calibrator`) will do."""

    def __init__(self, calibrator, *, path: str, source: str):
        self.calibrator = calibrator
        self.name = calibrator.name
        self.needs_conditions: bool = calibrator.needs_conditions
        """Whether it reads P_contradicted and P_not_mentioned (a three-condition calibrator)."""
        self.info = CalibratorInfo(path=str(path), source=source, variant=self.name,
                                   fitted_for=dict(calibrator.fitted_for or {}))
        self.threshold: float | None = getattr(calibrator, "threshold", None)
        """The verdict threshold stored in the file (``franq fit calibrator --target-precision``):
        the pipeline's ``calibration.threshold`` unless the config sets one."""
        self.warnings: tuple[str, ...] = ()
        collapsed = calibrator.output_range_warning()
        if collapsed:
            msg = f"calibrator {path}: {collapsed}"
            log.warning(msg)
            self.warnings = (msg,)

    def apply(self, inputs: ClaimInputs) -> CalibratedClaims:
        if self.needs_conditions and not inputs.has_conditions:
            raise InputError(f"calibrator {self.info.path}: a three-condition calibrator needs "
                             "P_contradicted and P_not_mentioned, which this faithfulness backend does not give "
                             "(use the 'verifier' backend)")
        try:
            return self.calibrator.predict_components(inputs)
        except ValueError as exc:  # e.g. an XGBoost model's feature this stack does not compute
            raise InputError(f"calibrator {self.info.path}: {exc}") from None


def load_calibrator(path: str | Path):
    """A FRANQ isotonic calibrator (binary or three-condition) or an XGBoost baseline model,
    by the file's content (``format``)."""
    obj = read_json(path, max_bytes=limit_of("artefact_bytes"), max_depth=limit_of("json_depth"))
    if obj.get("format") == THREE_CONDITION_FORMAT:
        return ThreeConditionCalibrator.from_dict(obj, where=f"calibrator {path}")
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
    if on_mismatch not in CALIBRATOR_MISMATCH:
        raise InputError(f"'calibration.on_mismatch': expected one of {list(CALIBRATOR_MISMATCH)}, "
                         f"got {on_mismatch!r}")
    if setting is None or setting == "none":
        return None, ()
    if setting == "default":
        path = default_calibrator_path(stack)
        if path is None:
            log.info("no shipped calibrator for this stack %s; scores are uncalibrated", stack)
            return None, ()
        log.info("using the shipped calibrator %s", path.name)
        active = ActiveCalibrator(load_calibrator(path), path=f"franq/data/{path.name}", source="shipped")
        return active, active.warnings
    try:
        cal = load_calibrator(setting)
    except (CalibratorFileError, ValueError) as exc:
        text = str(exc)  # calibration/ names the calibrator itself; never "calibrator: calibrator: ..."
        raise InputError(text if text.startswith("calibrator") else f"calibrator {setting}: {text}") from None
    diffs = stack_mismatches(cal.fitted_for or {}, stack)
    if not diffs:
        active = ActiveCalibrator(cal, path=str(Path(setting).resolve()), source="user")
        return active, active.warnings
    detail = "; ".join(diffs)
    if on_mismatch == "error":
        raise CalibratorMismatchError(f"calibrator {setting} was fitted for another stack ({detail}); refit it "
                                      f"with `franq fit calibrator` for this stack, or set calibration.on_mismatch="
                                      f"'force' / --calibrator-mismatch force to apply it anyway")
    if on_mismatch == "force":
        msg = f"calibrator {setting} applied although it was fitted for another stack ({detail})"
        log.warning(msg)
        active = ActiveCalibrator(cal, path=str(Path(setting).resolve()), source="user")
        return active, (msg, *active.warnings)
    msg = f"calibrator {setting} NOT applied: it was fitted for another stack ({detail}); scores are uncalibrated"
    log.warning(msg)
    return None, (msg,)
