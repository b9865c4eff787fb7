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
import os
from importlib import resources
from pathlib import Path

from calibration.base import CalibratorFileError, read_json
from calibration.contract import CalibratedClaims, ClaimInputs
from calibration.franq import FranqCalibrator, stack_mismatches
from calibration.prior import MovesWithPrior, check_prior
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

    def __init__(self, calibrator, *, path: str, source: str, prior: float | None = None):
        if prior is not None:
            move_to_prior(calibrator, prior, path)
        self.calibrator = calibrator
        self.name = calibrator.name
        self.needs_conditions: bool = calibrator.needs_conditions
        """Whether it reads P_contradicted and P_not_mentioned (a three-condition calibrator)."""
        self.info = CalibratorInfo(path=str(path), source=source, variant=self.name,
                                   fitted_for=dict(calibrator.fitted_for or {}),
                                   prior=getattr(calibrator, "prior", None))
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


def check_movable(calibrator, path: str | Path) -> None:
    """Refuse, naming the file, a calibrator that cannot be moved to a new share of true claims:
    an XGBoost baseline, or a FRANQ file whose fitted share is unknown."""
    if not isinstance(calibrator, MovesWithPrior):
        raise InputError(f"calibrator {path}: a new base rate moves the maps of a FRANQ calibrator (three-condition "
                         f"or binary); this one is {calibrator.name!r}")
    if calibrator.base_rate is None or not 0.0 < calibrator.base_rate < 1.0:
        raise InputError(f"calibrator {path}: the share of true claims it was fitted on is unknown "
                         f"({calibrator.base_rate!r})")


def move_to_prior(calibrator, prior: float, path: str | Path, field: str = "calibration.prior") -> None:
    """Move ``calibrator`` (in place) to a deployment where a share ``prior`` of claims is true
    (:mod:`calibration.prior`; what ``franq fit prior`` writes to a file); a share it was moved to
    before is replaced. Refused in one line naming ``field`` or the file."""
    check_movable(calibrator, path)
    try:
        calibrator.prior = check_prior(prior, field)
    except ValueError as exc:
        raise InputError(str(exc)) from None


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


def calibrator_file(name: str) -> Path:
    """A calibrator file named by path, or a shipped one by its name as ``franq score`` prints
    it (``calibrator-....json`` or ``franq/data/calibrator-....json``) from any directory."""
    path = Path(name)
    if path.is_file():
        return path
    if str(path.parent) in (".", "franq/data", os.path.join("franq", "data")):
        shipped = {p.name: p for p in shipped_calibrators()}
        if path.name in shipped:
            return shipped[path.name]
    raise InputError(f"calibrator {name}: no such file, nor a shipped calibrator's name (`franq fit shipped --list` "
                     "names them)")


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


def calibrator_entries(setting: str | None) -> list[str]:
    """The entries of a ``calibration.calibrator`` setting: ``default``, ``none`` or files,
    several separated by commas (``mine.json,default``). A setting that names an existing file
    whole is that one file, commas in its name included."""
    if setting is None:
        return []
    text = str(setting).strip()
    if "," in text and Path(text).is_file():
        return [text]
    return [e.strip() for e in text.split(",") if e.strip()]


def load_user_calibrator(path: str):
    """:func:`load_calibrator` of a user's file, a bad file refused in one line naming it."""
    try:
        return load_calibrator(path)
    except (CalibratorFileError, ValueError) as exc:
        text = str(exc)  # calibration/ names the calibrator itself; never "calibrator: calibrator: ..."
        raise InputError(text if text.startswith("calibrator") else f"calibrator {path}: {text}") from None


def _shipped(stack: dict[str, str], prior: float | None) -> ActiveCalibrator | None:
    path = default_calibrator_path(stack)
    if path is None:
        log.info("no shipped calibrator for this stack %s", stack)
        return None
    log.info("using the shipped calibrator %s", path.name)
    return ActiveCalibrator(load_calibrator(path), path=f"franq/data/{path.name}", source="shipped", prior=prior)


def resolve_calibrator(setting: str | None, stack: dict[str, str], *, on_mismatch: str = "warn",
                       prior: float | None = None) -> tuple[ActiveCalibrator | None, tuple[str, ...]]:
    """The calibrator to apply and any warnings for the results. ``setting``: ``None`` or
    ``"none"`` = no calibration; ``"default"`` = the shipped one matching ``stack``, if
    any; else a path to a calibrator file, or several entries separated by commas: the
    first fitted for ``stack`` applies (``mine.json,default``: the user's file where it
    fits, the shipped one elsewhere, e.g. for the short answers of ``--mode auto`` or the
    ``fast_short`` preset of ``--fast``). ``on_mismatch`` applies when none fits; ``force``
    needs one file to force. ``prior`` (``calibration.prior``): the share of true claims the
    one applied is moved to (:func:`move_to_prior`)."""
    if on_mismatch not in CALIBRATOR_MISMATCH:
        raise InputError(f"'calibration.on_mismatch': expected one of {list(CALIBRATOR_MISMATCH)}, "
                         f"got {on_mismatch!r}")
    entries = calibrator_entries(setting)
    if not entries or entries == ["none"]:
        return None, ()
    if "none" in entries:
        raise InputError(f"calibration.calibrator {setting!r}: 'none' cannot be listed with other calibrators")
    users = []  # (file, calibrator, why it does not fit) of each user file that does not fit
    for entry in entries:
        if entry == "default":
            active = _shipped(stack, prior)
            if active is not None:
                return active, active.warnings
            continue
        cal = load_user_calibrator(entry)
        diffs = stack_mismatches(cal.fitted_for or {}, stack)
        if not diffs:
            active = ActiveCalibrator(cal, path=str(Path(entry).resolve()), source="user", prior=prior)
            return active, active.warnings
        users.append((entry, cal, "; ".join(diffs)))
    if not users:  # only "default", and nothing shipped for this stack: uncalibrated, as before
        return None, ()
    detail = "; ".join(f"{e} ({d})" for e, _, d in users)
    name = users[0][0]
    if on_mismatch == "error":
        what = (f"calibrator {name} was fitted for another stack ({users[0][2]})" if len(users) == 1 else
                f"none of the calibrators {setting!r} was fitted for this stack: {detail}")
        raise CalibratorMismatchError(f"{what}; refit it with `franq fit calibrator` for this stack, or set "
                                      f"calibration.on_mismatch='force' / --calibrator-mismatch force to apply it "
                                      f"anyway")
    if on_mismatch == "force":
        if len(users) > 1:
            raise InputError(f"calibration.on_mismatch 'force' applies one file, and none of {setting!r} was fitted "
                             f"for this stack ({detail}): name the one to force")
        msg = f"calibrator {name} applied although it was fitted for another stack ({users[0][2]})"
        log.warning(msg)
        active = ActiveCalibrator(users[0][1], path=str(Path(name).resolve()), source="user", prior=prior)
        return active, (msg, *active.warnings)
    msg = (f"calibrator {name} NOT applied: it was fitted for another stack ({users[0][2]}); scores are uncalibrated"
           if len(users) == 1 else f"calibrators {detail}: NOT applied, none was fitted for this stack; "
                                   "scores are uncalibrated")
    log.warning(msg)
    return None, (msg,)
