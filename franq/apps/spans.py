"""The answer cut into pieces at claim span boundaries, for the highlighted view of
:mod:`franq.apps.render` (``franq report``, ``franq serve``'s ``/render``)."""
from __future__ import annotations

from collections.abc import Sequence

import franq


def segments(answer: str, claims: Sequence[franq.ClaimScore], *,
             max_marks: int | None = None) -> list[tuple[int, int, tuple[int, ...]]]:
    """The answer cut at every claim span boundary: ``(start, end, claim indices covering it)``
    for every piece, covered or not, in order (claims may overlap: atomic claims do).

    One sweep over the cuts: spans sorted by start and by end enter and leave a count of
    the claims covering the current piece, so the work is O(n log n) in the n spans plus
    the size of the output (the covering tuples: rebuilt only where they change).
    ``max_marks`` bounds that output (the sum of the tuples' lengths): spans nested so
    deep that it would be larger raise :class:`franq.InputError`."""
    spans = [(s, e, k) for k, c in enumerate(claims) for s, e in c.claim.char_spans if 0 <= s < e <= len(answer)]
    cuts = sorted({0, len(answer), *(s for s, _, _ in spans), *(e for _, e, _ in spans)})
    by_start = sorted(spans, key=lambda t: t[0])
    by_end = sorted(spans, key=lambda t: t[1])
    active: dict[int, int] = {}  # claim index -> spans of it covering the piece
    covering: tuple[int, ...] = ()
    i = j = marks = 0
    out = []
    for a, b in zip(cuts, cuts[1:]):
        changed = False
        while i < len(by_start) and by_start[i][0] <= a:  # entered: starts at or before the piece
            k = by_start[i][2]
            active[k] = active.get(k, 0) + 1
            i, changed = i + 1, True
        while j < len(by_end) and by_end[j][1] <= a:  # left: ended at or before it (entered already)
            k = by_end[j][2]
            active[k] -= 1
            if not active[k]:
                del active[k]
            j, changed = j + 1, True
        if changed:
            covering = tuple(sorted(active))
        marks += len(covering)
        if max_marks is not None and marks > max_marks:
            raise franq.InputError(f"'claims': the char_spans overlap so much that the view would mark over "
                                   f"{max_marks} claim-piece pairs; give fewer overlapping spans")
        out.append((a, b, covering))
    return out
