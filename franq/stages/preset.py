"""The components one preset runs (:class:`PresetPipeline`), built once from the config's
names through :mod:`franq.registry`: the evidence gatherer, UQ_faith, UQ_unfaith, the extra
scorers, the stack they make and the calibrator fitted for it."""
from __future__ import annotations

import functools
from dataclasses import dataclass

from franq import registry
from franq.calibrate import ActiveCalibrator, resolve_calibrator
from franq.errors import InputError
from franq.evidence import ANSWER_SAMPLES, SAMPLES
from franq.evidence.passes import TokenPasses
from franq.evidence.samples import SampleDraws, SamplingOptions
from franq.faithfulness.base import has_conditions
from franq.lm.prompts import answer_prompt_version
from franq.presets import FAST_TOP_WINDOWS, Preset, preset_notes, scorer_names
from franq.stages.evidence import capture_spec
from franq.types import Stack


@dataclass
class PresetPipeline:
    """The components one preset runs, built once."""

    preset: Preset
    evidence: object
    uq_faith: object
    uq_unfaith: object
    extra: tuple
    stack: dict[str, str]
    """The stack as a calibrator records it (``fitted_for``; :func:`franq.calibrate.stack_key`)."""
    result_stack: Stack
    """The same, as the results carry it (:attr:`franq.types.AnswerScore.stack`)."""
    calibrator: ActiveCalibrator | None
    calibration_warnings: tuple[str, ...]
    faithfulness: object = None
    """The preset's own faithfulness backend where it differs from the pipeline's (``fast``:
    the verifier on each claim's closest windows); None: the pipeline's."""


def build_preset(config, lm, preset: Preset, *, faithfulness, equivalence=None, prompt_style: str = "franq"
                 ) -> PresetPipeline:
    """Build ``preset``'s components for ``config`` around the pipeline's ``lm`` and
    faithfulness backend (``equivalence``: a judge passed in; else the config's)."""
    c = config
    missing = frozenset(getattr(faithfulness, "needs", ())) - preset.evidence  # a backend passed in
    if missing:
        raise InputError(f"faithfulness {faithfulness.name!r} cannot run in the {preset.name} preset: "
                         f"it reads {sorted(missing)}, which the {preset.name} preset does not gather")
    if not preset.uq:
        return _build_text_only(c, preset, faithfulness)
    names = scorer_names(c, preset)
    lm = lm if preset.evidence else None  # chat: its scorers read text only, whatever the pipeline loaded
    build = functools.partial(registry.build, "scorers", config=c, lm=lm)
    uq_faith, uq_unfaith = build(name=names.faith), build(name=names.unfaith)
    # an extra scorer that is already UQ_faith or UQ_unfaith runs once: its signals are kept anyway
    extra = tuple(build(name=n) for n in dict.fromkeys(names.extra) if n not in (names.faith, names.unfaith))
    declared = [sig.name for s in {x.name: x for x in (uq_faith, uq_unfaith, *extra)}.values() for sig in s.signals]
    clash = sorted({n for n in declared if declared.count(n) > 1})
    if clash:
        raise InputError(f"config 'uq.{preset.name}': two scorers declare the signal(s) {clash}; "
                         f"signal names must be unique within a preset")
    if SAMPLES in preset.evidence:
        judge = equivalence or registry.build("equivalence", c.uq.equivalence, c, lm)
        evidence = SampleDraws(lm, judge, options=SamplingOptions.from_config(c.uq),
                               on_overflow=c.model.on_overflow, with_answer=ANSWER_SAMPLES in preset.evidence,
                               max_batch_tokens=c.batch.max_batch_tokens, style=prompt_style)
        more = {"equivalence": judge.name, "sampling": f"n={c.uq.n_samples},temperature={c.uq.temperature:g},"
                                                       f"max_tokens={c.uq.max_sample_tokens},seed={c.uq.seed}"}
    elif not preset.evidence:  # chat: text-only scorers, no causal LM loaded
        evidence, more = NoEvidence(), {}
    else:
        evidence = TokenPasses(lm, on_overflow=c.model.on_overflow, max_batch_tokens=c.batch.max_batch_tokens,
                               capture=capture_spec(faithfulness, uq_faith, uq_unfaith, *extra), style=prompt_style)
        more = {}
    stack = Stack.build(model=FAST_STACK_NONE if lm is None else lm.name, faithfulness=faithfulness.name, uq_faith=uq_faith.name,
                        uq_unfaith=uq_unfaith.name, mode=preset.name,
                        prompt_version=answer_prompt_version(prompt_style), **more)
    calibrator, warnings = _calibrator(c, preset, stack, faithfulness)
    return PresetPipeline(preset, evidence, uq_faith, uq_unfaith, extra, stack.to_dict(), stack, calibrator,
                          warnings)


def _calibrator(c, preset: Preset, stack: Stack, faithfulness) -> tuple[ActiveCalibrator | None, tuple[str, ...]]:
    """The calibrator the config names for ``stack`` and the results' notes about it."""
    calibrator, warnings = resolve_calibrator(c.calibration.calibrator, stack.to_dict(),
                                              on_mismatch=c.calibration.on_mismatch, prior=c.calibration.prior)
    if calibrator is not None and calibrator.needs_conditions and not has_conditions(faithfulness):
        raise InputError(f"calibrator {calibrator.info.path} is a three-condition calibrator; the faithfulness "
                         f"backend {faithfulness.name!r} gives no P_contradicted (use 'verifier')")
    return calibrator, (*warnings, *preset_notes(c, preset, calibrated=calibrator is not None))


class NoEvidence:
    """The evidence gatherer of a preset that reads text only (``fast``, ``chat``): nothing to gather."""

    name = "none"

    def gather(self, records) -> None:
        return None


FAST_STACK_NONE = "none"
"""The model, UQ scorers and prompt version of a ``fast`` stack: none runs (the model of a ``chat``
stack too: its UQ scorers name the chat model)."""


def is_fast_stack(stack: dict) -> bool:
    """Whether ``stack`` (as a result writes it) ran no UQ scorer: the ``fast`` presets."""
    return stack.get("uq_faith") == FAST_STACK_NONE and stack.get("uq_unfaith") == FAST_STACK_NONE


def uq_scorers(stack: dict) -> list:
    """The scorer classes ``stack`` (as a result writes it) names for UQ_faith and UQ_unfaith;
    none for a fast stack (no UQ term)."""
    return [] if is_fast_stack(stack) else [registry.stack_scorer(stack[r]) for r in ("uq_faith", "uq_unfaith")]


def _build_text_only(c, preset: Preset, faithfulness) -> PresetPipeline:
    """``fast`` / ``fast_short``: the faithfulness backend alone (a verifier reads each claim's
    :data:`~franq.presets.FAST_TOP_WINDOWS` closest windows); its calibrator maps P_supported to P(true)."""
    narrowed = getattr(faithfulness, "with_top_windows", None)
    faithfulness = narrowed(FAST_TOP_WINDOWS) if narrowed else faithfulness
    none = FAST_STACK_NONE
    stack = Stack.build(model=none, faithfulness=faithfulness.name, uq_faith=none, uq_unfaith=none,
                        mode=preset.name, prompt_version=none)
    calibrator, warnings = _calibrator(c, preset, stack, faithfulness)
    return PresetPipeline(preset, NoEvidence(), None, None, (), stack.to_dict(), stack, calibrator, warnings,
                          faithfulness)
