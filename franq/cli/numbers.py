"""The numeric option type every command takes its numbers through (:class:`Number`), and
the kinds of number the options share; :mod:`franq.cli.options` re-exports them."""
from __future__ import annotations

import math

import click


class Number(click.ParamType):
    """A finite number (a whole one with ``integer``) in ``[low, high]`` (``low_open`` /
    ``high_open``: the bound itself excluded): every numeric option of every command takes
    its values through this, so ``nan``, ``inf``, ``1e999`` and ``-3`` where a count is meant
    end in one line naming the option (click's own ranges let ``nan`` through)."""

    def __init__(self, low: float = -math.inf, high: float = math.inf, *, integer: bool = False,
                 low_open: bool = False, high_open: bool = False):
        self.low, self.high, self.integer, self.low_open, self.high_open = low, high, integer, low_open, high_open
        self.name = "integer" if integer else "number"

    def describe(self) -> str:
        kind = "a whole number" if self.integer else "a finite number"
        if self.high == math.inf:
            return kind if self.low == -math.inf else f"{kind} {'>' if self.low_open else '>='} {self.low:g}"
        return f"{kind} in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}{')' if self.high_open else ']'}"

    def convert(self, value, param, ctx):
        try:
            number = float(value) if not isinstance(value, (int, float)) or isinstance(value, bool) else value
            if self.integer:
                number = int(str(value).strip().replace("_", "")) if not isinstance(value, int) else value
        except (TypeError, ValueError):
            self.fail(f"expected {self.describe()}, got {value!r}", param, ctx)
        if not math.isfinite(number) or number < self.low or number > self.high or (
                self.low_open and number == self.low) or (self.high_open and number == self.high):
            self.fail(f"expected {self.describe()}, got {value!r}", param, ctx)
        return number


PROBABILITY = Number(0.0, 1.0)
"""A probability option (``--threshold``): a finite number in [0, 1]."""
COUNT = Number(1, integer=True)
"""A count option (``--n``, ``--limit``, ``--chunk-tokens``): a whole number >= 1."""
COUNT_OR_ZERO = Number(0, integer=True)
"""A count where 0 means none or all, as the option's help says."""
AMOUNT = Number(0.0)
"""A finite number >= 0 (seconds, CPUs per worker)."""
