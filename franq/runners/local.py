"""Batch scoring of JSONL files: streaming, resumable, and robust to bad records.

    franq score IN.jsonl -o OUT.jsonl [--errors ERR.jsonl] [--runner local|ray] [--quiet]

* Streaming with bounded memory: input is read line by line (a line longer than
  the ``record_bytes`` limit is skipped without being held in memory), answers are scored in
  batches of bounded size, results are appended as they come.
* Resumable: a record whose id is already in OUT is skipped. Each batch of output lines
  is appended with one ``write`` on an ``O_APPEND`` descriptor and ``fsync``-ed; a failed
  write is cut back off. On resume every line of OUT is parsed in full: a line that is not
  a complete result (a crash's partial last line, a damaged line anywhere) is moved to
  ``OUT.recovered`` and its record is scored again. Records without an id get a stable
  content hash (:meth:`Example.stable_id`).
* Safe paths: input, output, error and recovery files must be different files (symlinks
  and hard links resolved; :mod:`franq.runners.paths`), checked before anything is read
  or written; an output that is not a regular file (a pipe, ``/dev/null``) is a stream.
* Bad records (undecodable bytes, invalid JSON, wrong types, missing or unknown fields,
  oversized records or passages, duplicate ids, failures while scoring one answer) go to
  the error file as ``{"line", "id", "error"}`` with a reason naming the field; the run
  carries on. The error file is rewritten by every run: a rerun re-reads every record
  not yet in OUT, so it reports every remaining bad record exactly once.
* Throughput: records are grouped into one :meth:`Franq.score_many` call until their
  estimated token count reaches ``batch_tokens`` (dynamic batches); inside the call the
  forward passes are sorted by length and padded batches are bounded by
  ``FranqConfig.max_batch_tokens``. A failing batch is retried one answer at a time so
  a bad answer cannot sink the others.

The scoring runner is pluggable: :class:`LocalRunner` (this process) or
:class:`franq.runners.ray.RayRunner` (Ray Data actors); both score through
:func:`franq.runners.base.score_batches`. Input records are :mod:`franq.runners.records`, the output :mod:`franq.runners.output`.
"""
from __future__ import annotations

import itertools
import logging
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from franq.errors import InputError
from franq.runners.base import BATCH_TOKENS, MAX_BATCH_ANSWERS, Runner, Scored, score_batches
from franq.runners.paths import FILE, STREAM, check_distinct, check_input, output_kind
from franq.runners.output import ErrorFile, OutputLog, Provenance, StreamOutput, is_result_line
from franq.runners.records import BadRecord, Record, RecordReader, count_lines

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BatchSummary:
    scored: int
    claims: int
    skipped: int
    bad: int
    duplicates: int
    seconds: float
    errors_path: str | None = None
    recovered: int = 0
    """Damaged output lines moved to ``recovery_path`` (their records were scored again)."""
    recovery_path: str | None = None

    def message(self) -> str:
        rate = self.claims / self.seconds if self.seconds > 0 else 0.0
        where = f" (see {self.errors_path})" if (self.bad or self.duplicates) and self.errors_path else ""
        moved = (f"; {self.recovered} damaged output line(s) moved to {self.recovery_path} and their records "
                 f"scored again" if self.recovered else "")
        return (f"scored {self.scored} answers, {self.bad} bad records, {self.duplicates} duplicate ids, "
                f"{self.skipped} skipped (already in output); {self.claims} claims, {rate:.2f} claims/s{where}"
                f"{moved}")


class LocalRunner:
    """Scores in this process with one loaded :class:`~franq.pipeline.Franq`.

    ``batch_tokens=0`` scores one answer per call (the unbatched baseline)."""

    def __init__(self, franq, *, batch_tokens: int = BATCH_TOKENS, max_answers: int = MAX_BATCH_ANSWERS):
        self.franq = franq
        self.batch_tokens = batch_tokens
        self.max_answers = max_answers

    def run(self, records: Iterator[Record]) -> Iterator[list[Scored | BadRecord]]:
        return score_batches(self.franq, records, batch_tokens=self.batch_tokens, max_answers=self.max_answers)


# ---------------------------------------------------------------------------- the run
class _Progress:
    """tqdm bar on stderr over input lines, with answers/s and claims/s."""

    def __init__(self, total: int | None, enabled: bool):
        self.bar = None
        self.start = time.perf_counter()
        self.answers = self.claims = 0
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="line", file=sys.stderr, dynamic_ncols=True,
                            desc="franq score")

    def line(self) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def scored(self, n_claims: int) -> None:
        self.answers += 1
        self.claims += n_claims
        if self.bar is not None:
            dt = max(time.perf_counter() - self.start, 1e-9)
            self.bar.set_postfix_str(f"{self.answers / dt:.2f} answers/s, {self.claims / dt:.2f} claims/s",
                                     refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run_jsonl(runner_factory: Callable[[], Runner], input_path: str, output: str | None, *,
              errors_path: str | None = None, progress: bool = True, fsync: bool = True,
              limits=None, strict: bool = False, presets: Sequence[str] | None = None,
              mode: str | None = None) -> BatchSummary:
    """Score a JSONL file into ``output`` (``None`` or ``"-"``: stdout, no resume; a path
    that is a pipe, a terminal or a device such as ``/dev/null``: written as a stream, no resume).

    Before anything is read or written: the input exists, and the input, output, error and
    recovery files are four different files (:func:`franq.runners.paths.check_distinct`).
    ``runner_factory`` is called once, when the first record to score is met: a locked
    or foreign output fails before any model is loaded, and a finished run loads none.
    ``limits``: the bounds on each record (:class:`franq.limits.Limits`; the defaults when None).
    ``strict``: a record with an unknown field is bad (otherwise its fields are kept in its meta).
    ``presets`` (of ``mode``): what this run scores with. A resumed output holding results of
    another preset is refused before anything is read, and one whose results of a preset came
    from another stack or calibrator when the first such line is scored, before it is written
    (:class:`~franq.runners.output.Provenance`).
    """
    started = time.perf_counter()
    check_input(input_path)
    streamed = output_kind(output) == STREAM
    recovery_path = None if streamed else output + ".recovered"
    check_distinct({"input": input_path, "output": "-" if output is None else output,
                    "error file": errors_path, "recovery file": recovery_path})
    if streamed:
        out = StreamOutput(sys.stdout) if output in (None, "-") else StreamOutput.open(output)
    else:
        out = OutputLog(output, fsync=fsync, is_record=is_result_line, recovery_path=recovery_path)
    errs = bar = None
    try:
        held = Provenance(output, getattr(out, "held", {}), presets=presets, mode=mode)
        reader = RecordReader(limits=limits, done_digests=out.digests, strict=strict)
        if reader.pending:
            log.info("resuming: %d records already in %s", reader.pending, output)
        bar = _Progress(count_lines(input_path), progress)
        reader.on_line = bar.line
        errs = ErrorFile(errors_path, input_path)
        try:
            stream = sys.stdin.buffer if input_path == "-" else open(input_path, "rb")
        except OSError as exc:
            raise InputError(f"input: cannot read {input_path}: {exc.strerror}") from None
        n_bad = n_ok = n_claims = 0

        def good_records() -> Iterator[Record]:
            nonlocal n_bad
            for item in reader.read(stream):
                if isinstance(item, BadRecord):
                    errs.write(item)
                    n_bad += not item.duplicate
                else:
                    yield item

        with stream:
            records = good_records()
            first = next(records, None)  # load no model when nothing is left to score
            batches = runner_factory().run(itertools.chain([first], records)) if first else ()
            for outcomes in batches:
                lines = []
                for outcome in outcomes:
                    if isinstance(outcome, BadRecord):
                        errs.write(outcome)
                        n_bad += 1
                    else:
                        held.check(outcome.json)
                        lines.append(outcome.json)
                        n_claims += outcome.n_claims
                        bar.scored(outcome.n_claims)
                out.append(lines)
                n_ok += len(lines)
                errs.flush()
    finally:
        if bar is not None:
            bar.close()
        try:
            out.close()
        finally:
            if errs is not None:
                errs.close()
    return BatchSummary(n_ok, n_claims, reader.skipped, n_bad, reader.duplicates,
                        time.perf_counter() - started, errors_path, out.recovered, recovery_path)


def score_file(config, input_path: str, output: str | None, *, errors_path: str | None = None,
               runner: str = "local", workers: int = 2, cpus_per_worker: float = 1.0,
               gpus_per_worker: float = 0.0, ray_address: str | None = None,
               batch_tokens: int = BATCH_TOKENS, progress: bool = True) -> BatchSummary:
    """``franq score IN.jsonl -o OUT.jsonl``: pick the runner for a :class:`FranqConfig`
    and run :func:`run_jsonl` within the config's limits (``config.limits``). Bad records
    go to ``errors_path`` (default ``OUT.errors.jsonl``, or stderr when writing to stdout)."""
    if errors_path is None and output_kind(output) == FILE:
        errors_path = output + ".errors.jsonl"
    if runner == "ray":
        from franq.presets import check_config
        from franq.runners.ray import RayRunner

        check_config(config)  # here: each worker builds its own pipeline, where an error would be wrapped

        def factory() -> Runner:
            return RayRunner(config, workers=workers, cpus_per_worker=cpus_per_worker,
                             gpus_per_worker=gpus_per_worker, address=ray_address,
                             batch_tokens=batch_tokens)
    elif runner == "local":
        def factory() -> Runner:
            from franq.pipeline import Franq

            return LocalRunner(Franq.from_config(config), batch_tokens=batch_tokens)
    else:
        raise InputError(f"runner: expected 'local' or 'ray', got {runner!r}")
    from franq.presets import presets_for

    presets = [p.name for p in presets_for(config.mode, config)]
    return run_jsonl(factory, input_path, output, errors_path=errors_path, progress=progress,
                     limits=config.limits, strict=config.batch.strict, presets=presets, mode=config.mode)

