"""``franq score``: score one example (flags, ``--example`` or a ``.json`` file) or a JSONL
file of examples; the per-claim table, JSON, CSV or an HTML report."""
from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass, replace
from importlib import resources

import click

from calibration.base import MissingDependencyError
from franq.cli.options import (
    AMOUNT, CALIBRATOR_MISMATCH_OPTION, DECOMPOSER_OPTIONS, FAST_OPTION, PRIOR_OPTION, PROGRESS_OPTION, RAW_CSV_OPTION,
    THRESHOLD_OPTION, StackFlags, StageProgress, decomposer_flags, fail, fast_mode, grouped, interactive,
    load_pipeline, options, printable, stack,
    stack_files,
)
from franq.cli.preflight import check_batch_paths, check_named_files
from franq.cli.table import format_table
from franq.errors import FranqError, InputError
from franq.files import atomic_write, check_outputs, read_text
from franq.io import Example, load_json, parse_example
from franq.runners.base import BATCH_TOKENS
from franq.runners.local import score_file
from franq.results import ResultLine, read_results, result_record


@dataclass(frozen=True)
class BatchOptions:
    """How a JSONL batch runs (``franq score IN.jsonl``): :func:`franq.runners.local.score_file`'s options."""

    runner: str = "local"
    workers: int = 2
    cpus_per_worker: float = 1.0
    gpus_per_worker: float = 0.0
    ray_address: str | None = None
    batch_tokens: int = BATCH_TOKENS


BATCH_OPTIONS = [
    click.option("--runner", type=click.Choice(["local", "ray"]), default="local", show_default=True,
                 help="Batch mode: score in this process, or on Ray Data actors (pip install 'franq[ray]')."),
    click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
                 help="Ray: number of actors, each with one loaded model."),
    click.option("--cpus-per-worker", type=AMOUNT, default=1.0, show_default=True,
                 help="Ray: CPUs reserved per actor."),
    click.option("--gpus-per-worker", type=AMOUNT, default=0.0, show_default=True,
                 help="Ray: GPUs reserved per actor (fractions share a GPU)."),
    click.option("--ray-address", default=None,
                 help="Ray: cluster address ('auto' = the running cluster). Default: a local Ray."),
    click.option("--batch-tokens", type=click.IntRange(min=0), default=BATCH_TOKENS, show_default=True,
                 help="Batch mode: answers per scoring call, by estimated tokens (0 = one answer per call)."),
]

FORMAT_OPTION = click.option(
    "--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table",
    help="Output for a single example: a table, the JSON record, or CSV (one row per claim). A batch is "
         "written as JSONL (-o, resumable); with csv, its claims also go to standard output as CSV.")
HTML_OPTION = click.option(
    "--html", "html_path", type=click.Path(dir_okay=False),
    help="Also write a self-contained HTML report (claims coloured by P(true); see `franq report`).")


@click.command()
@click.argument("input_path", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True),
              help="Output JSONL (batch mode). Default: standard output. A single example's record is "
                   "written there as one JSON line too, beside the --format view.")
@click.option("--errors", "errors_path", type=click.Path(dir_okay=False),
              help="Where bad records go (batch mode). Default: OUTPUT.errors.jsonl, or stderr.")
@click.option("-q", "--question", help="The question (with --passage and --answer).")
@click.option("-p", "--passage", "passages", multiple=True, help="A retrieved passage (repeat).")
@click.option("-a", "--answer", help="The answer to score.")
@click.option("--example", is_flag=True, help="Score the bundled example.")
@FORMAT_OPTION
@RAW_CSV_OPTION
@HTML_OPTION
@THRESHOLD_OPTION
@options(DECOMPOSER_OPTIONS)
@CALIBRATOR_MISMATCH_OPTION
@PRIOR_OPTION
@click.option("--quiet", is_flag=True,
              help="No progress bar (one answer: shown on a terminal only, or with --progress).")
@PROGRESS_OPTION
@click.option("--strict", is_flag=True, help="Refuse a record with an unknown field (default: kept in its "
                                              "meta['unknown_fields'], named in one notice).")
@FAST_OPTION
@grouped("batch", BATCH_OPTIONS, BatchOptions)
@stack
def score(input_path, output, errors_path, question, passages, answer, example, fmt, raw_csv, html_path, threshold,
          decomposer, decomposer_model, decomposer_base_url, calibrator_mismatch, prior, quiet, progress_lines, strict,
          fast, batch: BatchOptions, stack: StackFlags):
    """Score one example (flags, --example or a .json file) or a JSONL file of examples.

    A JSONL line is {"id", "question", "passages": [str | {"title", "text"}], "answer",
    "claims"?}. Each result is one JSON line; a malformed line becomes an error record
    naming the line and field, and the run carries on. Rerunning with the same -o
    resumes: records already in OUT are skipped (an OUT written by another mode, model,
    backend or calibrator is refused, not mixed).
    """
    try:
        batch_input = bool(input_path) and (input_path == "-" or input_path.endswith(".jsonl"))
        default_errors = output + ".errors.jsonl" if batch_input and output not in (None, "-") else None
        outputs = {"output": output, "error file": errors_path or default_errors, "--html": html_path}
        check_outputs(outputs, {"input": input_path, **stack_files(stack)})  # the batch runner's names
        cfg = stack.config(calibrator_mismatch=calibrator_mismatch, threshold=threshold, prior=prior,
                           mode=fast_mode(fast, stack.mode),
                           **decomposer_flags(decomposer, decomposer_model, decomposer_base_url))
        check_outputs(outputs, {"input": input_path, **stack_files(stack, cfg)})
        if strict:
            cfg = replace(cfg, batch=replace(cfg.batch, strict=True))
        if batch_input:
            if html_path and output in (None, "-"):
                raise InputError("--html: a batch report is made from the output file; give -o OUT.jsonl")
            check_batch_paths(input_path, output, errors_path)
            check_named_files(cfg)  # a missing calibrator, model or probe fails now, not after the model loads
            if fmt == "csv":
                return batch_csv(cfg, input_path, output, errors_path, html_path, raw_csv=raw_csv, quiet=quiet,
                                 batch=batch)
            summary = score_file(cfg, input_path, output, errors_path=errors_path, progress=not quiet, **asdict(batch))
            click.echo(printable(summary.message()), err=True)
            if html_path:
                write_html_report(html_path, output)
            return
        if errors_path:
            click.echo(f"warning: --errors {errors_path}: only a batch (a .jsonl input) writes bad records there; a "
                       "single example's error is printed here and the file is not written", err=True)
        if output not in (None, "-") and os.path.exists(output) and os.path.getsize(output) > 0:
            raise InputError(f"-o {output}: the file exists; a single example's record goes to a new file (a batch, "
                             "FILE.jsonl -o OUT, resumes an existing OUT)")
        ex = single_example(input_path, question, passages, answer, example, limits=cfg.limits,
                            strict=cfg.batch.strict)
        check_named_files(cfg)
        with StageProgress(not quiet and (interactive() or progress_lines), "franq score",
                           lines=not interactive()) as progress:
            pipeline = load_pipeline(cfg)
            progress()
            progress.attach(pipeline)
            result = pipeline.score_many([ex])[0]
    except (FranqError, MissingDependencyError) as exc:
        raise fail(exc) from None
    print_result(ResultLine("", ex.id, result, ex), fmt, html_path, raw_csv=raw_csv, threshold=cfg.calibration.threshold,
                 output=output)


def print_result(line: ResultLine, fmt: str, html_path: str | None, *, raw_csv: bool = False,
                 threshold: float | None = None, output: str | None = None) -> None:
    """One scored answer (with the example it scored) on stdout as a table, a JSON line or CSV
    rows (escaped against formula injection unless ``raw_csv``); ``html_path``: also a report;
    ``threshold``: the --threshold its verdicts were given at; ``output`` (-o): also its record,
    one JSON line as a batch writes it (standard output: the record replaces the table)."""
    record = result_record(line.id, line.result, line.example)
    if output == "-":
        fmt = "json" if fmt == "table" else fmt
    elif output is not None:
        atomic_write(output, json.dumps(record, ensure_ascii=False) + "\n")
        click.echo(f"wrote {output}", err=True)
    if fmt == "csv" or html_path:  # the views show what the JSON line holds (secrets redacted)
        line = next(read_results(record, with_input=True))
    if fmt == "json":
        click.echo(json.dumps(record, ensure_ascii=False))
    elif fmt == "csv":
        from franq.apps.claims_csv import csv_text

        click.echo(csv_text([line], raw=raw_csv), nl=False)
    else:
        click.echo(format_table(line.result, threshold=threshold))
    if html_path:
        from franq.apps.render import report_html

        atomic_write(html_path, report_html([line], title=f"franq: {line.result.question[:80]}"))
        click.echo(f"wrote {html_path}", err=True)


def batch_csv(cfg, input_path: str, output: str | None, errors_path: str | None, html_path: str | None, *,
              raw_csv: bool, quiet: bool, batch: BatchOptions) -> None:
    """``--format csv`` for a batch: the JSONL goes to ``-o`` (resumable; without one, to a
    temporary file whose bad records are copied to stderr), then one CSV row per claim to
    standard output, verdicts at ``--threshold`` when given."""
    import tempfile

    from franq.apps.claims_csv import write_csv
    from franq.apps.report import read_records

    with tempfile.TemporaryDirectory(prefix="franq-score-") as tmp:
        scores = output or os.path.join(tmp, "scores.jsonl")
        summary = score_file(cfg, input_path, scores, errors_path=errors_path, progress=not quiet, **asdict(batch))
        message = summary.message()
        if output is None and errors_path is None:  # the temporary error file goes with the folder: listed below
            message = message.replace(f" (see {scores}.errors.jsonl)", " (listed below)")
        click.echo(printable(message), err=True)
        if output is None and errors_path is None and os.path.exists(scores + ".errors.jsonl"):
            with open(scores + ".errors.jsonl", encoding="utf-8") as f:
                click.echo(f.read(), err=True, nl=False)
        lines = list(read_records([scores], warn=lambda msg: click.echo(f"warning: {msg}", err=True)))
        write_csv(lines, sys.stdout, raw=raw_csv, threshold=cfg.calibration.threshold)
        if html_path:
            write_html_report(html_path, scores)


def write_html_report(html_path: str, scores_path: str) -> None:
    """The report of a batch's output file (its results read back with their input)."""
    from franq.apps.render import report_html
    from franq.apps.report import read_records

    lines = list(read_records([scores_path], warn=lambda msg: click.echo(f"warning: {msg}", err=True)))
    atomic_write(html_path, report_html(lines))
    click.echo(f"wrote {html_path}: {len(lines)} answers", err=True)


def single_example(input_path, question, passages, answer, example, *, limits=None, strict=False) -> Example:
    """The one example a command was given: the bundled one, a ``.json`` file, or flags;
    within ``limits`` (:mod:`franq.limits`), checked before any model loads."""
    if example:
        text = resources.files("franq").joinpath("data/example.json").read_text(encoding="utf-8")
        return parse_example(json.loads(text), "bundled example", limits=limits)
    if input_path:
        text = read_text(input_path, limit="json_file_bytes", what="input")
        return parse_example(load_json(text, input_path), input_path, limits=limits, strict=strict)
    if not (question and passages and answer):
        raise InputError("give --question, at least one --passage and --answer; or a JSON/JSONL "
                         "file; or --example")
    return parse_example({"question": question, "passages": list(passages), "answer": answer}, limits=limits)
