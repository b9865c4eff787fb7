"""How many CPU threads torch uses: chosen deliberately, not left to torch's default, and
set in one place, :func:`configure_threads` (every command and entry point calls it).

Torch starts one intra-op thread per core. On a small machine that is also running other
work (a 2-core laptop or CI runner, several franq workers on one host) those threads
oversubscribe the cores and spin-wait on each other: the issue that motivated this
measured the same scoring about 5x faster with one thread, with identical outputs
(benchmarks/results/threads.md has this machine's numbers).

A count over the ``threads`` limit (:mod:`franq.limits`; 256 unless raised) is refused
before torch is asked: torch answers ``1000000`` with a MemoryError, then a segfault.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Mapping

from franq.limits import check

log = logging.getLogger(__name__)

MAX_AUTO_THREADS = 8
ENV_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


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


def resolve_threads(flag: int | None = None, config: int | None = None,
                    environ: Mapping[str, str] | None = None) -> tuple[int, str]:
    """The thread count and where it came from (``"flag"``, ``"config"``, the environment
    variable's name, or ``"default"``): see :func:`configure_threads`."""
    if flag is not None:
        return flag, "flag"
    if config is not None:
        return config, "config"
    environ = os.environ if environ is None else environ
    for var in ENV_VARS:
        value = environ.get(var, "").split(",")[0].strip()  # OpenMP also takes a list per nesting level
        if value.isdigit() and int(value) >= 1:
            return int(value), var
        if value:
            log.warning("%s=%r is not a thread count; ignored", var, environ[var])
    return auto_threads(), "default"


def configure_threads(flag: int | None = None, config: int | None = None, *,
                      limits: Mapping[str, int] | None = None) -> int:
    """Set torch's intra-op thread count; returns the count in use. The one way franq
    sets it: every ``--threads`` flag (:data:`franq.cli.options.THREADS_OPTION`, one
    definition for all commands), ``[model] threads``, the batch workers and the
    workbench's fits and benchmarks come through here.

    Precedence, first set wins:

    1. ``flag``: ``--threads N`` (or a caller's explicit count, e.g. a fit recipe's);
    2. ``config``: ``[model] threads``;
    3. the environment: ``OMP_NUM_THREADS``, else ``MKL_NUM_THREADS``;
    4. the default, :func:`auto_threads`: one thread per two usable cores, 1 to 8 (so a
       2-core machine runs one thread).

    ``limits``: the limits in force (``config.limits``; the defaults when None)."""
    threads, source = resolve_threads(flag, config)
    check("threads", threads, subject=source if source in ENV_VARS else "threads", limits=limits)
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
        log.info("torch CPU threads: %d (%s)", threads, source)
    return threads
