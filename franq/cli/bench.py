"""``franq bench ...``: the workbench's benchmark harness (:mod:`franq.evaluation.benchmark`,
docs/BENCHMARKS.md): the paper's tables on public data with the embedded model.

    franq bench observe long  --split test              # model passes, cached, resumable
    franq bench observe short --split test --variant clean
    franq bench report --out DIR                         # tables + plots into DIR (no model passes)
    franq bench report --update-committed                # rewrite the committed results
    franq bench all --quick --out DIR                    # smoke test of every stage

Paths are under ``--root`` (a franq checkout: ``datasets/``, ``benchmarks/``, ``docs/``;
default: the current folder).
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from franq.cli.options import COUNT, THREADS_OPTION, fail, options

ROOT_OPTION = click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=".",
                           show_default=True, help="The franq checkout holding datasets/, benchmarks/ and docs/.")
MODEL_OPTIONS = [
    ROOT_OPTION,
    click.option("--model", default=None, help="Model path or name (default: the embedded model)."),
    click.option("--cache", type=click.Path(file_okay=False, path_type=Path), default=None,
                 help="Folder of the observe caches (default: ROOT/benchmarks/cache/eval)."),
    click.option("--fresh", is_flag=True, help="Ignore the committed snapshots in datasets/generations."),
    click.option("--max-new-tokens", type=COUNT, default=16, show_default=True,
                 help="Short-form answer and sample length."),
]
REPORT_OPTIONS = [
    click.option("--quick", is_flag=True, help="The CI-sized subset (a smoke test of every stage)."),
    click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
                 help="Folder for the tables, JSON and plots (default: ROOT/benchmarks/cache/report/)."),
    click.option("--update-committed", is_flag=True,
                 help="Write into the tracked benchmarks/results/ and rewrite the results section of "
                      "docs/BENCHMARKS.md (instead of --out)."),
    click.option("--n-boot", type=COUNT, default=1000, show_default=True,
                 help="Bootstrap resamples for the 95% intervals."),
]


def _layout(root: Path):
    from franq.evaluation.benchmark import Layout

    if not (root / "datasets").is_dir():
        raise click.UsageError(f"--root {root}: no datasets/ folder there; run from a franq checkout or pass --root")
    return Layout(root)


def _command() -> str:
    """The command line that made a report, as the report records it."""
    argv = sys.argv[1:]
    return "franq " + " ".join(argv) if argv[:1] == ["bench"] else "franq bench report"


@click.group("bench")
def bench() -> None:
    """Benchmarks: the paper's tables on public data (docs/BENCHMARKS.md)."""


@bench.command("observe")
@click.argument("setting", type=click.Choice(["long", "short"]))
@click.option("--split", type=click.Choice(["train", "test"]), required=True)
@click.option("--variant", type=click.Choice(["clean", "corrupted"]), default="clean", show_default=True)
@click.option("--limit", type=COUNT, default=None, help="First N items (default: the benchmark size).")
@options(MODEL_OPTIONS)
@THREADS_OPTION
def observe(setting, split, variant, limit, root, model, cache, fresh, max_new_tokens, threads):
    """Run the model passes into the cache (resumable)."""
    from franq.evaluation.benchmark import observe as run

    run(_layout(root), setting, split, variant=variant, model=model, limit=limit, max_new_tokens=max_new_tokens,
        threads=threads, cache=cache, fresh=fresh)


def _report(layout, *, model, cache, fresh, max_new_tokens, quick, out, update_committed, n_boot):
    from franq.evaluation.benchmark import BenchError, output_dir, report

    try:
        out_dir = output_dir(layout, out, update_committed=update_committed, quick=quick)
    except BenchError as exc:
        raise click.UsageError(str(exc)) from None
    try:
        report(layout, out_dir, command=_command(), model=model, cache=cache, fresh=fresh,
               max_new_tokens=max_new_tokens, quick=quick, n_boot=n_boot, update_committed=update_committed,
               echo=click.echo)
    except (ValueError, OSError) as exc:
        raise fail(exc) from None


@bench.command("report")
@options(MODEL_OPTIONS + REPORT_OPTIONS)
def report_command(root, model, cache, fresh, max_new_tokens, quick, out, update_committed, n_boot):
    """Compute every method from the caches; write tables and plots."""
    _report(_layout(root), model=model, cache=cache, fresh=fresh, max_new_tokens=max_new_tokens, quick=quick,
            out=out, update_committed=update_committed, n_boot=n_boot)


@bench.command("all")
@options(MODEL_OPTIONS + REPORT_OPTIONS)
@THREADS_OPTION
def all_command(root, model, cache, fresh, max_new_tokens, quick, out, update_committed, n_boot, threads):
    """Observe everything that is missing, then report."""
    from franq.evaluation.benchmark import QUICK, SIZES, STAGES, BenchError, observe as run, output_dir

    layout = _layout(root)
    try:
        output_dir(layout, out, update_committed=update_committed, quick=quick)  # refuse before the model passes
    except BenchError as exc:
        raise click.UsageError(str(exc)) from None
    sizes = QUICK if quick else SIZES
    for setting, split, variant in STAGES:
        run(layout, setting, split, variant=variant, model=model, limit=sizes[setting][split],
            max_new_tokens=max_new_tokens, threads=threads, cache=cache, fresh=fresh)
    _report(layout, model=model, cache=cache, fresh=fresh, max_new_tokens=max_new_tokens, quick=quick,
            out=out, update_committed=update_committed, n_boot=n_boot)
