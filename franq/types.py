"""Typed, frozen results and inputs, and the closed vocabularies of their fields
(``Literal`` types). One JSON output line is ``dataclasses.asdict`` of an
:class:`AnswerScore` (its :class:`Stack` as the dict it reads as) plus the input's id:
:func:`franq.results.result_record` writes it, :func:`franq.results.read_results` reads it back.

Names say what a value is: ``*_raw`` and the scorer signals are what the components
computed; ``*_calibrated`` values exist only when a calibrator was applied, and
:attr:`AnswerScore.calibrator` says which file produced them.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal

from claims.types import Claim

Status = Literal["scored", "not_check_worthy", "unaligned"]
"""What became of a claim: scored, kept but not scored (a heading), or not aligned to the answer's tokens."""
Verdict = Literal["likely_true", "likely_false", "uncertain"]
"""``uncertain``: the passages do not mention the claim and the model's own knowledge gives no usable signal."""
VerdictBasis = Literal["calibrated", "uncalibrated"]
"""What a verdict was taken from: calibrated P(true), or the raw mix when no calibrator applies."""
Action = Literal["answer", "fallback", "abstain"]
"""What an answering app does with a generated answer."""
Form = Literal["long", "short"]
"""The form an answer was scored in (:attr:`AnswerScore.mode`); the preset's own name is ``stack.mode``."""
Source = Literal["shipped", "user"]
"""Where a calibrator file comes from: shipped with franq or given by the user."""
STATUSES: tuple[Status, ...] = ("scored", "not_check_worthy", "unaligned")
VERDICTS: tuple[Verdict, ...] = ("likely_true", "likely_false", "uncertain")
VERDICT_BASES: tuple[VerdictBasis, ...] = ("calibrated", "uncalibrated")
ACTIONS: tuple[Action, ...] = ("answer", "fallback", "abstain")
FORMS: tuple[Form, ...] = ("long", "short")
SOURCES: tuple[Source, ...] = ("shipped", "user")


@dataclass(frozen=True)
class Passage:
    text: str
    title: str = ""


@dataclass(frozen=True)
class EvidenceWindow:
    """The passage window a verifier read its verdict from: ``passages[passage].text[start:end]
    == text`` (character offsets in that passage's text, its title not included)."""

    passage: int
    start: int
    end: int
    text: str


@dataclass(frozen=True, eq=False)
class Stack(Mapping):
    """What produced a result's raw values, and so what a calibrator fitted on them is
    applied to: the model, the faithfulness backend, the UQ_faith and UQ_unfaith scorers,
    the prompt version and the preset (``mode``: ``long``, ``short``, ``observer``,
    ``probe``...); short form adds the equivalence judge and the sampling settings.
    ``extra`` holds any further keys, in order.

    A read-only mapping of those names to strings, in that order (the ``stack`` object of
    an output line and a calibrator's ``fitted_for``): ``stack["mode"]``, ``dict(stack)``
    and ``stack == {...}`` work as on the dict it is written as."""

    model: str
    faithfulness: str
    uq_faith: str
    uq_unfaith: str
    prompt_version: str
    mode: str
    equivalence: str | None = None
    sampling: str | None = None
    extra: tuple[tuple[str, str], ...] = ()

    @classmethod
    def build(cls, *, model: str, faithfulness: str, uq_faith: str, uq_unfaith: str, mode: str,
              prompt_version: str | None = None, **extra: object) -> Stack:
        """``prompt_version`` defaults to the current one; ``extra`` (short form: the
        equivalence judge and the sampling settings) is kept as text, in the given order."""
        if prompt_version is None:
            from franq.lm.prompts import PROMPT_VERSION

            prompt_version = PROMPT_VERSION
        return cls.from_dict({"model": model, "faithfulness": faithfulness, "uq_faith": uq_faith,
                              "uq_unfaith": uq_unfaith, "prompt_version": prompt_version, "mode": mode,
                              **{k: str(v) for k, v in extra.items()}})

    @classmethod
    def from_dict(cls, obj: Mapping[str, str]) -> Stack:
        """The stack written as ``obj`` (the caller checked that the six main keys are there
        and every value is a string); the written key order is kept."""
        def pick(named):
            return cls(**{k: obj[k] for k in named if k in obj},
                       extra=tuple((k, v) for k, v in obj.items() if k not in named))

        stack = pick(_STACK_FIELDS)
        return stack if list(stack) == list(obj) else pick(_STACK_KEYS)

    def to_dict(self) -> dict[str, str]:
        """The stack as written: the six main keys, then the extras in their order."""
        out = {k: getattr(self, k) for k in _STACK_KEYS}
        for k in ("equivalence", "sampling"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        out.update(self.extra)
        return out

    def __getitem__(self, key: str) -> str:
        return self.to_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    def __hash__(self) -> int:
        return hash(tuple(self.to_dict().items()))

    def __repr__(self) -> str:
        return f"Stack({self.to_dict()!r})"


@dataclass(frozen=True)
class KnowledgeTerm:
    """A calibrated claim's knowledge term, what decides when the passages do not speak:
    ``p_true``, its calibrated value (P(true | not mentioned), or P(true | not supported) with
    a binary calibrator), the ``base_rate`` of that map (its training claims' share of true
    ones; None when the file does not say), the 90% credible interval ``low`` / ``high``
    of its step (None for a map without step counts) and how well the map's score ranked the
    natural claims it was fitted on: ``check_auroc`` with its 90% bootstrap interval
    ``check_low`` / ``check_high`` (None for calibrator files fitted before the check;
    :mod:`calibration.knowledge_check`)."""

    p_true: float
    base_rate: float | None = None
    low: float | None = None
    high: float | None = None
    check_auroc: float | None = None
    check_low: float | None = None
    check_high: float | None = None


@dataclass(frozen=True)
class WeakestClaim:
    """The claim of an answer least likely true: its ``index`` in ``AnswerScore.claims``, its
    text, its P(true) (calibrated when a calibrator ran, else raw) and why (the verdict's reason)."""

    index: int
    text: str
    p_true: float
    reason: str


_STACK_KEYS = ("model", "faithfulness", "uq_faith", "uq_unfaith", "prompt_version", "mode")
_STACK_FIELDS = (*_STACK_KEYS, "equivalence", "sampling")


@dataclass(frozen=True)
class ClaimScore:
    """FRANQ's verdict on one claim; every probability is "higher = more likely true".

    ``status`` is ``"scored"``, ``"not_check_worthy"`` (headings, greetings: kept, not
    scored) or ``"unaligned"`` (no answer tokens; the reason is in ``claim.note``). The
    numbers are ``None`` unless the claim was scored.

    Raw (what the components computed):
        ``p_faithful``   P(claim supported by the passages), from the faithfulness backend
        ``uq_faith``     UQ_faith as a probability: p(c|x,r) in long form, exp(-semantic
                         entropy) in short form
        ``uq_unfaith``   UQ_unfaith as a probability: p(c|x) in long form, 1 / sum of
                         Laplacian eigenvalues in short form
        ``p_true_raw``   the uncalibrated mix p_faithful * uq_faith + (1 - p_faithful) * uq_unfaith
        ``signals``      every declared raw signal of every scorer, by name (log values,
                         uncertainties: see each scorer's ``signals``)
    With a faithfulness backend that tells the three conditions apart (the ``verifier``;
    ``None`` with the others), ``p_faithful`` is P(the passages support the claim) and:
        ``p_contradicted``    P(the passages contradict it)
        ``p_not_mentioned``   P(the passages do not speak about it); with ``p_faithful`` they sum to 1
        ``evidence_window``   the passage window they were read from (:class:`EvidenceWindow`)
    Calibrated (``None`` without a calibrator, or where the calibrator has no such part):
        ``p_true_calibrated``                  calibrated P(true): the number to threshold
        ``p_true_if_supported_calibrated``     P(true | supported): UQ_faith mapped on supported claims
        ``p_true_if_contradicted_calibrated``  three-condition calibrators: P(true | contradicted),
                                               UQ_faith mapped on contradicted claims
        ``p_true_if_not_mentioned_calibrated`` three-condition calibrators: P(true | not mentioned),
                                               UQ_unfaith mapped on claims the passages do not mention
        ``p_true_if_unfaithful_calibrated``    binary FRANQ calibrators: P(true | not supported),
                                               UQ_unfaith mapped on unsupported claims
        ``p_faithful_calibrated``              only when the calibrator also calibrates P_faithful
    An XGBoost calibrator gives ``p_true_calibrated`` alone.
        ``knowledge``    the knowledge term, P(true) from the model's own knowledge when the passages
                         do not speak, with its map's base rate and interval and its fit-time
                         ranking check (:class:`KnowledgeTerm`)
    Decision (only with a threshold, ``calibration.threshold`` / ``--threshold``; the rule is
    :func:`franq.verdicts.claim_verdict`):
        ``verdict``      ``"uncertain"`` when the passages do not mention the claim and its knowledge
                         term carries no usable signal (within ``calibration.uncertain_margin`` of its
                         map's base rate, or its interval straddles the threshold); else
                         ``"likely_true"`` when P(true) (calibrated when a calibrator ran, else
                         the raw mix) >= the threshold, else ``"likely_false"``
        ``verdict_reason`` why, in words ("contradicted by the passages (P_c 0.91)")
        ``verdict_basis`` ``"calibrated"`` or ``"uncalibrated"``: which P(true) the verdict read.
                         Without a calibrator for the stack (every model but the embedded one,
                         unless you fit one) the verdict is taken from the raw mix, on the
                         scorers' own scales: marked, not refused, and the answer's warnings
                         say so (the raw mix ranks claims; its level is not a probability of
                         being true until calibrated, so a threshold on it is a ranking cut)
    """

    claim: Claim
    status: Status
    p_faithful: float | None = None
    p_contradicted: float | None = None
    p_not_mentioned: float | None = None
    uq_faith: float | None = None
    uq_unfaith: float | None = None
    p_true_raw: float | None = None
    p_true_calibrated: float | None = None
    p_true_if_supported_calibrated: float | None = None
    p_true_if_contradicted_calibrated: float | None = None
    p_true_if_not_mentioned_calibrated: float | None = None
    p_true_if_unfaithful_calibrated: float | None = None
    p_faithful_calibrated: float | None = None
    signals: dict[str, float] = field(default_factory=dict)
    verdict: Verdict | None = None
    verdict_basis: VerdictBasis | None = None
    verdict_reason: str | None = None
    evidence_window: EvidenceWindow | None = None
    knowledge: KnowledgeTerm | None = None


@dataclass(frozen=True)
class CalibratorInfo:
    """Which calibrator produced the calibrated values: its file, whether it is the one
    shipped with franq or the user's, its variant and the stack it was fitted for; ``prior``,
    the share of true claims it was moved to (``calibration.prior`` / ``--prior``, or a file
    from ``franq fit prior``), None when it gives P(true) as fitted."""

    path: str
    source: Source
    variant: str
    fitted_for: dict[str, str]
    prior: float | None = None

    def named(self) -> str:
        """Its file, and the share of true claims it was moved to where it was (the CSV's column)."""
        return self.path if self.prior is None else f"{self.path} moved to prior {self.prior:g}"


@dataclass(frozen=True)
class Decision:
    """What to do with a generated answer (answering with faithfulness, paper 000):
    ``action`` is ``"answer"`` (the verifier's ``score`` reached ``threshold``),
    ``"fallback"`` (the fallback's answer replaces it) or ``"abstain"`` (no answer).
    ``answer`` is the text to show (None when abstaining), as the result's own ``answer``."""

    action: Action
    answer: str | None
    verify: str
    score: float
    threshold: float
    fallback: str
    fallback_answer: str | None = None
    policy: str | None = None
    """The policy file the threshold came from (None: given or the verifier's default)."""
    rejected_answer: str | None = None
    """The generated answer the check rejected (on a fallback or an abstention; None when
    ``action`` is ``"answer"``): the result's claims are its claims (:attr:`AnswerScore.scored_answer`)."""


@dataclass(frozen=True)
class AnswerScore:
    question: str
    answer: str
    """The answer to show: the scored answer, or after an answering app's fallback the
    fallback's answer ("" after an abstention; the rejected one is ``decision.rejected_answer``)."""
    claims: tuple[ClaimScore, ...]
    mode: Form
    """The form the answer was scored in: ``long`` or ``short`` (the preset: ``stack.mode``)."""
    stack: Stack
    """What produced the raw values (:class:`Stack`: the model, the faithfulness backend,
    the scorers, the preset...): a calibrator fitted on these results is applied only to the same stack."""
    calibrator: CalibratorInfo | None = None
    """The calibrator applied (None: none), its variant in ``calibrator.variant``."""
    warnings: tuple[str, ...] = ()
    decision: Decision | None = None
    """Set by an answering app (:class:`franq.apps.answering.Answerer`): verify, fall back or abstain."""

    @property
    def calibration(self) -> str:
        """The calibrator's variant (``condition``, ``calibrated``, ``three-soft``, ``xgboost``...) or ``none``."""
        return "none" if self.calibrator is None else self.calibrator.variant

    @property
    def scored_answer(self) -> str:
        """The text the claims were found in (their ``char_spans`` index it): ``answer``, or
        after a fallback or an abstention the rejected ``decision.rejected_answer``."""
        d = self.decision
        return self.answer if d is None or d.rejected_answer is None else d.rejected_answer

    @property
    def scored(self) -> tuple[ClaimScore, ...]:
        return tuple(c for c in self.claims if c.status == "scored")

    @property
    def p_all_true(self) -> float | None:
        """P(every scored claim is true): the product of the claims' P(true) (calibrated when a
        calibrator ran, else raw), taking the claims as independent, which they are not quite
        (one answer, one model): a summary to rank answers by, not a calibrated probability.
        None when no claim was scored."""
        from franq.verdicts import p_all_true

        return p_all_true(self)

    @property
    def weakest_claim(self) -> WeakestClaim | None:
        """The scored claim with the lowest P(true), with its reason; None when none was scored."""
        from franq.verdicts import weakest_claim

        return weakest_claim(self)
