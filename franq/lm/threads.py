"""How many CPU threads torch uses: chosen deliberately, not left to torch's default.

Torch starts one intra-op thread per core. On a small machine that is also running other
work (a 2-core laptop or CI runner, several franq workers on one host) those threads
oversubscribe the cores and spin-wait on each other: the issue that motivated this
measured the same scoring about 5x faster with one thread, with identical outputs
(benchmarks/results/threads.md has this machine's numbers).

``model.threads`` (``--threads``): a positive number is used as is. ``None`` (the default)
leaves an explicit ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS`` alone, and otherwise picks
:func:`auto_threads`: one thread per two usable cores, at least 1 and at most 8, so a
2-core machine runs one thread. A count over the ``threads`` limit (:mod:`franq.limits`;
256 unless raised) is refused before torch is asked: torch answers ``1000000`` with a
MemoryError, then a segfault.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Mapping

from franq.limits import check

log = logging.getLogger(__name__)

MAX_AUTO_THREADS = 8


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def auto_threads(cores: int | None = None) -> int:
    """The default: half the usable cores (the other half for the rest of the machine,
    and tokenization, judges and I/O), between 1 and 8."""
    cores = usable_cores() if cores is None else cores
    return max(1, min(MAX_AUTO_THREADS, cores // 2))


def configure_threads(threads: int | None, *, limits: Mapping[str, int] | None = None) -> int:
    """Set torch's intra-op thread count (see the module doc); returns the count in use.
    ``limits``: the limits in force (``config.limits``; the defaults when None)."""
    if threads is not None:
        check("threads", threads, subject="threads", limits=limits)
    import torch

    if threads is None:
        if os.environ.get("OMP_NUM_THREADS") or os.environ.get("MKL_NUM_THREADS"):
            return torch.get_num_threads()
        threads = auto_threads()
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
        log.info("torch CPU threads: %d", threads)
    return threads
