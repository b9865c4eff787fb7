"""``franq report``: a self-contained HTML report (and/or a CSV of the claims) from
``franq score`` output files.

    franq report scores.jsonl -o report.html [--csv claims.csv] [--threshold 0.5]

Lines that are not result records (error records, broken JSON, a wrong field) are
reported on stderr and skipped; the rest are read back with ``franq.read_results`` (typed:
each line's id, ``AnswerScore`` and the input it carried) and rendered by
:mod:`franq.apps.render` (HTML) and :mod:`franq.apps.claims_csv` (CSV).
"""
from __future__ import annotations

from collections.abc import Iterator

import click

import franq
from franq.apps import claims_csv, render
from franq.io import atomic_open, check_outputs
from franq.cli.options import PROBABILITY, RAW_CSV_OPTION


def read_records(paths, warn=None) -> Iterator:
    """The results of ``franq score`` output files, in order, read back with what their
    input carried (``franq.read_results(..., with_input=True)``); any other line (an error
    record, broken JSON, a wrong field) is passed to ``warn`` as "PATH line N: reason;
    skipped" and skipped."""
    def skip(message: str) -> None:
        if warn is not None:
            warn(f"{message}; skipped")

    for path in paths:
        yield from franq.read_results(path, with_input=True, on_skip=skip)


def no_scored_records(path) -> str:
    """The error for a file without one line of ``franq score`` output (often its input)."""
    return (f"{path} holds no scored records: a scored record is a line of `franq score` output, whose 'claims' "
            f"carry 'status' and P(true) values ('p_true_raw', ...) and whose 'stack' names the scorers; if {path} "
            f"is input to score, run `franq score {path} -o scores.jsonl` first and report scores.jsonl")


@click.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="HTML report to write.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, allow_dash=True),
              help="Also (or only) write one CSV row per claim ('-': standard output).")
@click.option("--threshold", type=PROBABILITY, default=0.5, show_default=True,
              help="Initial threshold of the report's filter (claims below it are marked); given, the HTML's "
                   "and the CSV's verdict columns are P(true) against it.")
@click.option("--page-size", type=click.IntRange(min=1), default=render.PAGE_SIZE, show_default=True,
              help="Answers per page.")
@click.option("--title", default="franq report", show_default=True, help="The report's title.")
@RAW_CSV_OPTION
@click.pass_context
def report(ctx, inputs, output, csv_path, threshold, page_size, title, raw_csv):
    """Render `franq score` output (JSONL) as one self-contained HTML file: each answer with its
    claims coloured by P(true), a side panel with every component and the closest passage window,
    an index from the least likely claim up, a threshold filter and pages. No network is needed to
    view it."""
    if not output and not csv_path:
        raise click.UsageError("give -o REPORT.html and/or --csv CLAIMS.csv")
    try:
        check_outputs({"-o": output, "--csv": csv_path}, {f"input {k + 1}": p for k, p in enumerate(inputs)})
        lines = []
        for path in inputs:
            read = list(read_records([path], warn=lambda msg: click.echo(f"warning: {msg}", err=True)))
            if not read:
                raise franq.InputError(no_scored_records(path))
            lines += read
    except franq.FranqError as exc:
        raise click.ClickException(str(exc)) from None
    given = ctx.get_parameter_source("threshold") is not click.core.ParameterSource.DEFAULT
    if given:  # the HTML's verdict column and the CSV's read the same cut
        lines = [render.Line(line.id, franq.with_verdicts(line.result, threshold), line.example) for line in lines]
    if output:
        with atomic_open(output) as f:
            f.write(render.report_html(lines, title=title, threshold=threshold, page_size=page_size))
        click.echo(f"wrote {output}: {len(lines)} answers", err=True)
    if csv_path:
        with atomic_open(csv_path) as f:
            n = claims_csv.write_csv(lines, f, raw=raw_csv)
        if csv_path != "-":
            click.echo(f"wrote {csv_path}: {n} claims", err=True)
