"""The two presets of the one FRANQ pipeline (paper section 2).

Both run the same named components in the same order::

    claims -> evidence -> uq_faith, uq_unfaith (+ extra scorers) -> faithfulness
           -> mix -> calibrator

and differ in what they gather and which scorers they use by default:

``long``  the answer is decomposed into claims aligned to its tokens; the evidence is the
          two teacher-forced passes (with / without the passages); UQ_faith = p(c|x,r)
          (``claim_prob``), UQ_unfaith = p(c|x) (``parametric``).
``short`` the whole answer is one claim; the evidence is N sampled answers; UQ_faith =
          semantic entropy, UQ_unfaith = sum of Laplacian eigenvalues (``eigval``);
          P_faithful checks "question answer" against the passages. This is the paper's
          in-policy setting: the model scores its own answer, so how much its samples
          agree says how sure it was of that answer.
``observer`` short form for an answer franq did not generate (scoring existing answers):
          the same samples, also judged against the given answer (and the answer
          teacher-forced after the same prompt); UQ_faith = the share of samples
          equivalent to it (``answer_share``), UQ_unfaith = the samples' mean soft agreement
          with it (``answer_consistency``). The sample-only terms of ``short`` give two
          different answers to one question the same value.
``probe``  short form without samples: the whole answer teacher-forced with and without
          the passages (the long preset's passes, hidden states captured); UQ_faith /
          UQ_unfaith = semantic entropy probes on the two passes (``se_probe``,
          ``se_probe_closed``, fitted by ``franq fit probe``): P(the samples would agree),
          read from one answer's hidden states.
``fast``   no causal LM at all (nothing loaded): the answer is split into claims (located
          by characters, not tokens) and each is checked against the passages by the
          faithfulness backend alone (the verifier reading the window closest to the claim,
          :data:`FAST_TOP_WINDOWS`, unless ``top_windows`` is set); P(true) = the
          backend's P_supported through the calibrator shipped for this stack
          (``franq/data/calibrator-fast-verifier.json``, fitted by :mod:`franq.fit.shipped_fast`). No UQ term runs: ``uq_faith`` /
          ``uq_unfaith`` stay empty and the raw mix is P_supported itself.
``fast_short`` what ``mode = "fast"`` runs on a short answer (one sentence of at most 15
          words, as ``auto`` tells them): the whole answer is one claim, checked as
          "question answer" as the short form does, with a calibrator of its own
          (``calibrator-fast_short-verifier.json``: a short answer's base rate is not a long
          claim's).
``chat``   both FRANQ terms from an OpenAI-compatible chat model, no causal LM loaded: the
          answer is split into claims (located by characters, as ``fast``) and each is
          checked by the faithfulness backend; UQ_faith = the chat model's P(True) asked
          with the passages (``chat_p_true_rag``), UQ_unfaith = asked without them
          (``chat_p_true``); the mix as in ``long``. A short answer is one claim like any
          other (a bare "1991" is read after its question). No calibrator ships: the stack
          names the server's model.

Which short preset runs is ``uq.short_scoring``: ``auto`` (the default) scores answers
franq generated (``Franq.answer``, or ``score_many(..., generated=True)``) in-policy and
every other answer as observer; ``probe`` scores every short answer with the probes.

``mode = "auto"`` picks ``short`` for a single short sentence and ``long`` otherwise, so
both presets must be able to run the configured components.
"""
from __future__ import annotations

from dataclasses import dataclass

from claims.decompose import split_sentences
from franq import registry
from franq.errors import InputError
from franq.evidence import ANSWER_SAMPLES, EVIDENCE_KINDS, INTERNALS, PASSES, SAMPLES

SHORT_MAX_WORDS = 15


@dataclass(frozen=True)
class Preset:
    name: str
    evidence: frozenset[str]
    """The evidence kinds this preset gathers (:mod:`franq.evidence`)."""
    whole_answer: bool
    """True: the answer is one claim (no decomposition, no token alignment)."""
    uq: bool = True
    """False: no UQ scorer runs (``fast``): P(true) reads the faithfulness backend alone."""

    @property
    def teacher_forces(self) -> bool:
        """It teacher-forces the answer (the token passes; the observer: the answer's likelihood)."""
        return bool({PASSES, ANSWER_SAMPLES} & self.evidence)

    @property
    def form(self) -> str:
        """``long`` or ``short``: the mode this preset serves (what results report)."""
        return "short" if self.whole_answer else "long"


LONG = Preset("long", frozenset({PASSES, INTERNALS}), whole_answer=False)
SHORT = Preset("short", frozenset({SAMPLES}), whole_answer=True)
OBSERVER = Preset("observer", frozenset({SAMPLES, ANSWER_SAMPLES}), whole_answer=True)
PROBE = Preset("probe", frozenset({PASSES, INTERNALS}), whole_answer=True)
FAST = Preset("fast", frozenset(), whole_answer=False, uq=False)
FAST_SHORT = Preset("fast_short", frozenset(), whole_answer=True, uq=False)
CHAT = Preset("chat", frozenset(), whole_answer=False)
PRESETS = {"long": LONG, "short": SHORT, "observer": OBSERVER, "probe": PROBE, "fast": FAST, "fast_short": FAST_SHORT,
           "chat": CHAT}
FAST_TOP_WINDOWS = 1
"""Windows per claim the ``fast`` preset's verifier reads: the one sharing the most content words
with the claim (``[faithfulness.verifier] top_windows``): 5% of the pairs of every window, at
AUROC .744 against .756 for support on ExpertQA train
(experiments/2026-11-28-fast-top-windows)."""
MODE_PRESETS = {"long": (LONG,), "short": (SHORT, OBSERVER), "auto": (LONG, SHORT, OBSERVER), "fast": (FAST, FAST_SHORT),
                "chat": (CHAT,)}
TEXT_ONLY_MODES = tuple(m for m, presets in MODE_PRESETS.items() if not any(p.evidence for p in presets))
"""The modes that load no causal LM (``fast``, ``chat``): none of their presets gathers evidence from it."""


def presets_for(mode: str, config=None) -> tuple[Preset, ...]:
    """The presets ``mode`` scores with; with ``config``, its ``uq.short_scoring`` decides
    the short ones (``probe`` replaces the two sampling presets)."""
    try:
        presets = MODE_PRESETS[mode]
    except KeyError:
        raise InputError(f"mode: expected one of {list(MODE_PRESETS)}, got {mode!r}") from None
    if config is not None and config.uq.short_scoring == "probe" and mode not in ("long", *TEXT_ONLY_MODES):
        presets = (*(p for p in presets if not p.whole_answer), PROBE)
    return presets


def short_preset(config, *, generated: bool) -> str:
    """``short`` (in-policy), ``observer`` or ``probe``: which short preset scores an
    answer, by ``uq.short_scoring`` and whether franq generated the answer."""
    choice = config.uq.short_scoring
    if choice == "auto":
        return "short" if generated else "observer"
    return {"in_policy": "short", "observer": "observer", "probe": "probe"}[choice]


def preset_notes(config, preset: Preset, *, calibrated: bool) -> tuple[str, ...]:
    """What a result of ``preset`` says about how it was scored, beyond its stack: which
    short-form scorer pair ran when it is not the paper's, and that verdicts read the raw
    mix when no calibrator applies (they are marked, not refused: ``verdict_basis``), as is a
    share of true claims (``calibration.prior``) that has none to move."""
    notes = []
    s = scorer_names(config, preset)
    if preset.name in ("observer", "probe"):
        why = ("the answer was given, not generated by franq" if preset.name == "observer"
               else "uq.short_scoring = 'probe' (no samples)")
        paper = scorer_names(config, SHORT)
        notes.append(f"short form scored by the {preset.name} pair (UQ_faith {s.faith}, UQ_unfaith {s.unfaith}): "
                     f"{why}; the paper's pair ({paper.faith}, {paper.unfaith}) scores franq's own answers "
                     f"(franq answer), or every short answer with uq.short_scoring = 'in_policy'")
    if config.calibration.threshold is not None and not calibrated:
        notes.append(f"calibration.threshold: no calibrator applies to this stack, so each verdict is taken from "
                     f"the uncalibrated mix (verdict_basis 'uncalibrated'): a ranking cut at "
                     f"{config.calibration.threshold:g}, not a probability; fit one with `franq fit calibrator`")
    if config.calibration.prior is not None and not calibrated:
        notes.append(f"calibration.prior {config.calibration.prior:g} not applied: no calibrator applies to this "
                     f"stack, and the share moves a calibrator's P(true)")
    return tuple(notes)


def is_short_answer(answer: str) -> bool:
    """``mode="auto"``: one sentence of at most 15 words, on one line, is short-form."""
    text = answer.strip()
    if not text or "\n" in text or len(text.split()) > SHORT_MAX_WORDS:
        return False
    return len(split_sentences(text)) <= 1


def scorer_names(config, preset: Preset):
    """``config.uq.long``, ``.short``, ``.observer`` or ``.probe``: the preset's faith / unfaith / extra
    scorers (None for a preset that runs none: ``fast``)."""
    return getattr(config.uq, preset.name) if preset.uq else None


def scorer_roles(config, preset: Preset) -> list[tuple[str, str]]:
    """The preset's scorers as ``(config key, name)``: ``uq.<preset>.faith``, ``.unfaith``, then
    each ``.extra``; none for a preset that runs no scorer (``fast``)."""
    s = scorer_names(config, preset)
    if s is None:
        return []
    key = f"uq.{preset.name}"
    return [(f"{key}.faith", s.faith), (f"{key}.unfaith", s.unfaith), *((f"{key}.extra", n) for n in s.extra)]


def loads_lm(mode: str, config=None) -> bool:
    """Whether ``mode`` needs the causal LM: a preset that gathers evidence from it (every mode
    but :data:`TEXT_ONLY_MODES`)."""
    return any(p.evidence for p in presets_for(mode, config))


def check_text_only(config) -> None:
    """A ``fast`` or ``chat`` pipeline loads no causal LM: refuse, naming the key, a component
    that would need one (the LLM decomposer on the local model)."""
    d = config.decomposer
    if d.name == "llm" and d.backend == "local" and not d.model:
        raise InputError(f"config 'decomposer.model': mode {config.mode!r} loads no causal LM, so the llm decomposer needs "
                         "a model of its own (decomposer.model) or backend 'openai'; or use the atomic decomposer")


def check_config(config) -> None:
    """Resolve every component ``config`` names (:mod:`franq.registry`), once, where a
    pipeline is built (:class:`~franq.pipeline.Franq`; a config itself is only a schema):
    refuse, with the reason, every name no registry knows, every component that cannot run
    in a preset the mode uses or on a served model, and every component table whose
    settings its component does not declare."""
    from franq.lm.served.checks import check_served
    from franq.settings import check_tables

    _check_known("decomposers", config.decomposer.name, "decomposer.name")
    _check_known("equivalence", config.uq.equivalence, "uq.equivalence")
    for preset in PRESETS.values():  # names of a preset the mode does not run must exist too
        for where, name in scorer_roles(config, preset):
            _check_known("scorers", name, where)
    _check_known("faithfulness", config.faithfulness.name, "faithfulness.name")  # its settings: franq.settings
    presets = presets_for(config.mode, config)
    for preset in presets:
        check_preset(config, preset)
    scorers = chosen_scorers(config, presets)  # the scorers the mode runs: their required settings and hooks too
    check_served(config)
    check_tables(config, {("faithfulness", config.faithfulness.name): "faithfulness.name",
                          ("decomposers", config.decomposer.name): "decomposer.name",
                          ("equivalence", config.uq.equivalence): "uq.equivalence", **scorers})


def _check_known(kind: str, name: str, where: str):
    """The component class registered as ``name``; the error names the config key."""
    try:
        return registry.lookup(kind, name)
    except InputError as exc:
        raise InputError(f"config '{where}': {exc}") from None


def check_preset(config, preset: Preset, *, settings: bool = False) -> None:
    """Every component ``config`` names for ``preset`` can run in it (that every name exists,
    the equivalence judge included, :func:`check_config` has checked for every preset);
    with ``settings``, its scorers' required settings are set too (a preset asked for per call,
    outside the mode :func:`check_config` checked: ``mode="chat"`` on a pipeline without
    ``[scorers.chat_p_true]`` is refused naming the key, before any request)."""
    for where, name in scorer_roles(config, preset):
        _check_fits("scorers", name, where, preset, config)
    _check_fits("faithfulness", config.faithfulness.name, "faithfulness.name", preset, config)
    if settings:
        from franq.settings import check_tables

        check_tables(config, chosen_scorers(config, (preset,)))


def chosen_scorers(config, presets) -> dict[tuple[str, str], str]:
    """``("scorers", name) -> the config key that chose it`` for every scorer ``presets`` run (the
    first key, where one scorer has several roles): what :func:`franq.settings.check_tables` checks."""
    chosen: dict[tuple[str, str], str] = {}
    for preset in presets:
        for where, name in scorer_roles(config, preset):
            chosen.setdefault(("scorers", name), where)
    return chosen


def _check_fits(kind: str, name: str, where: str, preset: Preset, config) -> None:
    missing = registry.needs(_check_known(kind, name, where), config) - preset.evidence
    if missing:
        what = "; ".join(f"{k} ({EVIDENCE_KINDS[k]})" for k in sorted(missing))
        has = "; ".join(f"{k} ({EVIDENCE_KINDS[k]})" for k in sorted(preset.evidence))
        why = " (mode 'auto' scores single short sentences with it)" if config.mode == "auto" else ""
        raise InputError(f"config '{where}': {name!r} cannot run in the {preset.name} preset{why}: it reads "
                         f"{what}, but the {preset.name} preset gathers only {has}; choose another "
                         f"{'scorer' if kind == 'scorers' else 'backend'} or another mode")
