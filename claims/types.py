"""The Claim record shared by decomposition, alignment and scoring."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Claim:
    """One claim of an answer.

    ``char_spans`` are half-open ``(start, end)`` character ranges of the answer that
    express the claim; they may be several (citation markers are cut out, and atomic
    claims can be non-contiguous). ``token_positions`` index the answer's tokens (0 =
    first answer token) and ``token_ids`` are those tokens' ids; both are empty until
    :func:`claims.align.align_claims` has run. A claim that is not check-worthy (a
    heading, a greeting) or that could not be aligned carries the reason in ``note``
    and is reported, never dropped.
    """

    text: str
    char_spans: tuple[tuple[int, int], ...]
    token_positions: tuple[int, ...] = ()
    token_ids: tuple[int, ...] = ()
    sentence: int = 0
    check_worthy: bool = True
    note: str | None = None

    @property
    def is_aligned(self) -> bool:
        return bool(self.token_positions)


@dataclass(frozen=True)
class DecompositionUsage:
    """What a decomposition cost: model calls (retries included), tokens as reported by
    the backend, answers served from the disk cache, answers that fell back to the
    sentence splitter."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    fallbacks: int = 0

    def __add__(self, other: DecompositionUsage) -> DecompositionUsage:
        return DecompositionUsage(*(a + b for a, b in zip(
            (self.calls, self.prompt_tokens, self.completion_tokens, self.cache_hits, self.fallbacks),
            (other.calls, other.prompt_tokens, other.completion_tokens, other.cache_hits, other.fallbacks))))


@dataclass(frozen=True)
class Decomposition:
    """The claims of one answer, what went wrong on the way (``warnings``, e.g. a fallback
    to the sentence splitter), and what it cost. ``method`` names the decomposer that
    produced the claims ("sentence", "llm", "llm->sentence" for a fallback)."""

    claims: tuple[Claim, ...]
    warnings: tuple[str, ...] = ()
    usage: DecompositionUsage = DecompositionUsage()
    method: str = "sentence"
