"""The ``franq`` command: thin; parses arguments, calls the API, prints."""
from __future__ import annotations

import json
import logging
from importlib import resources
from pathlib import Path

import click

from franq.batch import BATCH_TOKENS, MAX_PASSAGE_CHARS, MAX_RECORD_BYTES, result_record, score_file
from franq.config import FranqConfig
from franq.errors import FranqError, InputError
from franq.io import Example, parse_example
from franq.types import AnswerScore


def _config(config_path: str | None, model: str | None, gguf_file: str | None) -> FranqConfig:
    cfg = FranqConfig.from_file(config_path) if config_path else FranqConfig()
    return cfg.replace(model=model, gguf_file=gguf_file)


def _load(cfg: FranqConfig):
    from franq.pipeline import Franq

    return Franq.from_config(cfg)


def _fmt(p: float | None, small: bool = False) -> str:
    if p is None:
        return "-"
    return f"{p:.2e}" if small and p < 0.01 else f"{p:.3f}"


def format_table(result: AnswerScore, width: int = 100) -> str:
    lines = [
        f"Question: {result.question}",
        f"Model: {result.model} | faithfulness: {result.faithfulness} | calibration: {result.calibration}",
        "",
        f"{'#':>2}  {'P(true)':>8}  {'P(faith)':>8}  {'p(c|x,r)':>8}  {'p(c|x)':>8}  claim",
    ]
    for i, c in enumerate(result.claims, 1):
        text = c.claim.text if c.status == "scored" else f"[{c.status}: {c.claim.note}] {c.claim.text}"
        if len(text) > width:
            text = text[: width - 1] + "…"
        lines.append(f"{i:>2}  {_fmt(c.p_true, True):>8}  {_fmt(c.p_faithful):>8}  "
                     f"{_fmt(c.p_true_if_faithful, True):>8}  {_fmt(c.p_true_if_unfaithful, True):>8}  {text}")
    for w in result.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Log progress and model loading.")
@click.version_option(package_name="franq")
def main(verbose: bool) -> None:
    """franq: is each claim of a RAG answer true? (FRANQ)"""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


@main.command()
@click.argument("input_path", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True),
              help="Output JSONL (batch mode). Default: standard output.")
@click.option("--errors", "errors_path", type=click.Path(dir_okay=False),
              help="Where bad records go (batch mode). Default: OUTPUT.errors.jsonl, or stderr.")
@click.option("-q", "--question")
@click.option("-p", "--passage", "passages", multiple=True, help="A retrieved passage (repeat).")
@click.option("-a", "--answer")
@click.option("--example", is_flag=True, help="Score the bundled example.")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False),
              help="JSON or TOML FranqConfig file.")
@click.option("--model", help="Causal LM: local path or cached name (default: embedded SmolLM2).")
@click.option("--gguf-file", help="GGUF file inside --model, or a path to one.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              help="Output for a single example.")
@click.option("--quiet", is_flag=True, help="No progress bar (batch mode).")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Batch mode: score in this process, or on Ray Data actors (pip install 'franq[ray]').")
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="Ray: number of actors, each with one loaded model.")
@click.option("--cpus-per-worker", type=click.FloatRange(min=0), default=1.0, show_default=True)
@click.option("--gpus-per-worker", type=click.FloatRange(min=0), default=0.0, show_default=True)
@click.option("--ray-address", default=None,
              help="Ray: cluster address ('auto' = the running cluster). Default: a local Ray.")
@click.option("--batch-tokens", type=click.IntRange(min=0), default=BATCH_TOKENS, show_default=True,
              help="Batch mode: answers per scoring call, by estimated tokens (0 = one answer per call).")
@click.option("--max-record-bytes", type=click.IntRange(min=1), default=MAX_RECORD_BYTES, show_default=True)
@click.option("--max-passage-chars", type=click.IntRange(min=1), default=MAX_PASSAGE_CHARS, show_default=True)
def score(input_path, output, errors_path, question, passages, answer, example, config_path,
          model, gguf_file, fmt, quiet, engine, workers, cpus_per_worker, gpus_per_worker,
          ray_address, batch_tokens, max_record_bytes, max_passage_chars):
    """Score one example (flags, --example or a .json file) or a JSONL file of examples.

    A JSONL line is {"id", "question", "passages": [str | {"title", "text"}], "answer",
    "claims"?}. Each result is one JSON line; a malformed line becomes an error record
    naming the line and field, and the run carries on. Rerunning with the same -o
    resumes: records already in OUT are skipped.
    """
    try:
        cfg = _config(config_path, model, gguf_file)
        if input_path and (input_path == "-" or input_path.endswith(".jsonl")):
            summary = score_file(cfg, input_path, output, errors_path=errors_path,
                                 progress=not quiet, engine=engine, workers=workers,
                                 cpus_per_worker=cpus_per_worker, gpus_per_worker=gpus_per_worker,
                                 ray_address=ray_address, batch_tokens=batch_tokens,
                                 max_record_bytes=max_record_bytes,
                                 max_passage_chars=max_passage_chars)
            click.echo(summary.message(), err=True)
            return
        ex = _single_example(input_path, question, passages, answer, example)
        result = _load(cfg).score_many([ex])[0]
    except FranqError as exc:
        raise click.ClickException(str(exc)) from None
    if fmt == "json":
        click.echo(json.dumps(result_record(ex.id, result, ex), ensure_ascii=False))
    else:
        click.echo(format_table(result))


def _single_example(input_path, question, passages, answer, example) -> Example:
    if example:
        text = resources.files("franq").joinpath("data/example.json").read_text(encoding="utf-8")
        return parse_example(json.loads(text), "bundled example")
    if input_path:
        try:
            obj = json.loads(Path(input_path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"{input_path}: cannot read a JSON object: {exc}") from None
        return parse_example(obj, input_path)
    if not (question and passages and answer):
        raise InputError("give --question, at least one --passage and --answer; or a JSON/JSONL "
                         "file; or --example")
    return parse_example({"question": question, "passages": list(passages), "answer": answer})


@main.command()
@click.option("-q", "--question", required=True)
@click.option("-p", "--passage", "passages", multiple=True, required=True)
@click.option("--max-new-tokens", type=int, default=None)
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False))
@click.option("--model")
@click.option("--gguf-file")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
def answer(question, passages, max_new_tokens, config_path, model, gguf_file, fmt):
    """Generate an answer with the model from the passages, then score its claims."""
    try:
        result = _load(_config(config_path, model, gguf_file)).answer(
            question, list(passages), max_new_tokens=max_new_tokens)
    except FranqError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(result_record(None, result), ensure_ascii=False) if fmt == "json"
               else format_table(result))
