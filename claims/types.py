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
