"""Typed, frozen results and inputs. One JSON output line is ``dataclasses.asdict`` of an
:class:`AnswerScore` plus the input's id."""
from __future__ import annotations

from dataclasses import dataclass, field

from claims.types import Claim


@dataclass(frozen=True)
class Passage:
    text: str
    title: str = ""


@dataclass(frozen=True)
class ClaimScore:
    """FRANQ's verdict on one claim; all probabilities are "higher = more likely true".

    ``status`` is ``"scored"``, ``"not_check_worthy"`` (headings, greetings: kept, not
    scored) or ``"unaligned"`` (no answer tokens; the reason is in ``claim.note``). The
    probabilities are ``None`` unless the claim was scored. ``components`` holds every
    raw scorer value by name, log values included (e.g. ``claim_logprob``).
    """

    claim: Claim
    status: str
    p_faithful: float | None = None
    p_true_if_faithful: float | None = None
    p_true_if_unfaithful: float | None = None
    p_true: float | None = None
    components: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class AnswerScore:
    question: str
    answer: str
    claims: tuple[ClaimScore, ...]
    mode: str
    model: str
    faithfulness: str
    calibration: str = "none"
    warnings: tuple[str, ...] = ()

    @property
    def scored(self) -> tuple[ClaimScore, ...]:
        return tuple(c for c in self.claims if c.status == "scored")
