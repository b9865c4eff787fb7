"""What the stages fill in, as spaCy's ``Doc`` passes through its components.

:class:`AnswerRecord` is one answer on its way through the pipeline: the example as given
(its :class:`~franq.types.Passage` objects kept as they are, from input to result), its
claims, and what the evidence stage gathered for it. :class:`ClaimEvidence` is a view of
one scorable claim of a record: what scorers and faithfulness backends read. The batched
stages (uq, faithfulness, mix, calibrate) run over the scorable claims of every record of a
call at once and fill one :class:`ClaimBatch`, claim ``k`` in record order.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from claims.fragments import needs_question
from claims.types import Claim
from franq.io import Example
from franq.types import Passage


@dataclass(eq=False)
class AnswerRecord:
    """One answer and what the stages found for it (claims, then evidence).

    ``rag_logprobs`` / ``closed_logprobs`` cover every answer token (paper eq. 1 / eq. 3);
    ``samples`` / ``closed_samples`` are :class:`franq.scorers.diversity.SampleContext`
    objects; ``internals`` is the with-passages pass's :class:`~franq.lm.capture.TokenInternals`
    and ``closed_internals`` the closed-book pass's. What a preset does not gather stays ``None``.
    """

    example: Example
    claims: list[Claim]
    answer_ids: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    whole_answer: bool = False
    """The answer is one claim (short form): the faithfulness statement is "question answer" (in long
    form a claim that is not a statement on its own is read with the question: :meth:`evidence`)."""
    rag_logprobs: np.ndarray | None = None
    closed_logprobs: np.ndarray | None = None
    sample_set: object | None = None
    """Samples already drawn for this answer (a generated answer, cached samples): not drawn again."""
    samples: object | None = None
    closed_samples: object | None = None
    internals: object | None = None
    closed_internals: object | None = None

    @property
    def question(self) -> str:
        return self.example.question

    @property
    def passages(self) -> tuple[Passage, ...]:
        return self.example.passages

    def evidence(self, claim: Claim) -> ClaimEvidence:
        """The view of ``claim`` (one of :attr:`claims`) that scorers and backends read: its
        statement is the claim, or "question claim" for a claim that is a statement only with
        its question ("1991", "Born in Ulm.": :func:`claims.fragments.needs_question`), or
        "question answer" in short form."""
        if self.whole_answer:
            statement = f"{self.example.question} {self.example.answer.strip()}"
        elif needs_question(claim):
            statement = f"{self.example.question} {claim.text}"
        else:
            statement = claim.text
        return ClaimEvidence(self, claim, statement)


@dataclass(frozen=True, eq=False)
class ClaimEvidence:
    """One claim of an :class:`AnswerRecord` and everything gathered for it (read from the record).

    ``statement`` is the text a faithfulness backend checks against ``passages`` (the claim
    itself in long form, with the question before it when it is not a statement on its own;
    question and answer together in short form). The claim's own
    tokens in ``rag_logprobs`` / ``closed_logprobs`` / ``internals`` are ``claim.token_positions``.
    """

    record: AnswerRecord
    claim: Claim
    statement: str
    closed_book_samples: bool = False
    """``samples`` reads the samples drawn without the passages (UQ_unfaith with ``uq.unfaith_samples="closed"``)."""

    @classmethod
    def of(cls, claim: Claim, *, question: str = "q", passages=(), statement: str | None = None,
           answer: str | None = None, **gathered) -> ClaimEvidence:
        """A claim and its evidence on their own (a one-claim record): for tests and
        callers that hold the gathered values already."""
        record = AnswerRecord(Example(question, tuple(passages), claim.text if answer is None else answer),
                              [claim], **gathered)
        return cls(record, claim, claim.text if statement is None else statement)

    def with_closed_book_samples(self) -> ClaimEvidence:
        return dataclasses.replace(self, closed_book_samples=True)

    @property
    def question(self) -> str:
        return self.record.question

    @property
    def passages(self) -> tuple[Passage, ...]:
        return self.record.passages

    @property
    def rag_logprobs(self):
        return self.record.rag_logprobs

    @property
    def closed_logprobs(self):
        return self.record.closed_logprobs

    @property
    def samples(self):
        return self.record.closed_samples if self.closed_book_samples else self.record.samples

    @property
    def closed_samples(self):
        return self.record.closed_samples

    @property
    def internals(self):
        return self.record.internals

    @property
    def closed_internals(self):
        return self.record.closed_internals


@dataclass
class ClaimBatch:
    """The scorable claims of one call, across its records (claim ``k`` in record order),
    and what each batched stage found for them, filled in this order."""

    claims: list[ClaimEvidence]
    uq_faith: np.ndarray | None = None
    """uq: UQ_faith's primary signal as a probability, in [0, 1]."""
    uq_unfaith: np.ndarray | None = None
    """uq: UQ_unfaith's, likewise."""
    signals: dict[str, np.ndarray] = field(default_factory=dict)
    """uq: every scorer's raw signals, by signal name (what results keep as ``signals``)."""
    p_supported: np.ndarray | None = None
    """faithfulness: P(claim supported by the passages)."""
    conditions: object | None = None
    """faithfulness: the :class:`~franq.faithfulness.base.Conditions` of a backend that tells
    supported / contradicted / not mentioned apart (None for the others)."""
    p_true_raw: np.ndarray | None = None
    """mix: the uncalibrated FRANQ mix."""
    calibrated: object | None = None
    """calibrate: :class:`~calibration.contract.CalibratedClaims` (None without a calibrator)."""

    def __len__(self) -> int:
        return len(self.claims)
