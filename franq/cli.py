"""The ``franq`` command: thin; parses arguments, calls the API, prints."""
from __future__ import annotations

import dataclasses
import json
import logging
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import click

from franq.config import FranqConfig
from franq.errors import FranqError, InputError
from franq.io import Example, parse_example, parse_json_line
from franq.types import AnswerScore

BATCH_ANSWERS = 8


def _config(config_path: str | None, model: str | None, gguf_file: str | None) -> FranqConfig:
    cfg = FranqConfig.from_file(config_path) if config_path else FranqConfig()
    return cfg.replace(model=model, gguf_file=gguf_file)


def _load(cfg: FranqConfig):
    from franq.pipeline import Franq

    return Franq.from_config(cfg)


def result_record(example_id: str | None, result: AnswerScore, example: Example | None = None) -> dict:
    """One output line: the id, the result, and any claim labels the input carried."""
    record = {"id": example_id, **dataclasses.asdict(result)}
    if example is not None and example.claim_labels:
        for claim, labels in zip(record["claims"], example.claim_labels):
            claim.update(labels)
    return record


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
@click.option("--decomposer", type=click.Choice(["sentence", "llm"]), default=None,
              help="Claims: 'sentence' (default: offline splitter) or 'llm' (atomic claims from a "
                   "chat model: the scoring model, or a server with --decomposer-base-url).")
@click.option("--decomposer-model", help="LLM decomposer: server model name, or local model path.")
@click.option("--decomposer-base-url", help="LLM decomposer: OpenAI-compatible server URL, e.g. "
                                            "http://localhost:8000/v1 (API key from $OPENAI_API_KEY).")
def score(input_path, output, errors_path, question, passages, answer, example, config_path,
          model, gguf_file, fmt, decomposer, decomposer_model, decomposer_base_url):
    """Score one example (flags, --example or a .json file) or a JSONL file of examples.

    A JSONL line is {"id", "question", "passages": [str | {"title", "text"}], "answer",
    "claims"?}. Each result is one JSON line; a malformed line becomes an error record
    naming the line and field, and the run carries on.
    """
    try:
        cfg = _config(config_path, model, gguf_file).replace(
            decomposer=decomposer, decomposer_model=decomposer_model, decomposer_base_url=decomposer_base_url,
            decomposer_backend="openai" if decomposer_base_url else None)
        if input_path and (input_path == "-" or input_path.endswith(".jsonl")):
            _score_jsonl(cfg, input_path, output, errors_path)
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


def _read_lines(path: str) -> Iterator[tuple[int, str | None, str]]:
    """Yield ``(line_number, text or None, error)``; undecodable bytes become an error."""
    stream = sys.stdin.buffer if path == "-" else open(path, "rb")
    with stream:
        for n, raw in enumerate(stream, 1):
            try:
                yield n, raw.decode("utf-8"), ""
            except UnicodeDecodeError as exc:
                yield n, None, f"line {n}: not valid UTF-8 ({exc.reason} at byte {exc.start})"


def _score_jsonl(cfg: FranqConfig, input_path: str, output: str | None, errors_path: str | None) -> None:
    out = sys.stdout if output in (None, "-") else open(output, "w", encoding="utf-8")
    if errors_path is None and output not in (None, "-"):
        errors_path = output + ".errors.jsonl"
    errs = open(errors_path, "w", encoding="utf-8") if errors_path else sys.stderr
    franq = _load(cfg)
    n_ok = n_bad = 0

    def bad(line_no: int, ident, reason: str) -> None:
        nonlocal n_bad
        n_bad += 1
        errs.write(json.dumps({"line": line_no, "id": ident, "error": reason}, ensure_ascii=False) + "\n")

    def flush(batch: list[tuple[int, Example]]) -> None:
        nonlocal n_ok
        if not batch:
            return
        try:
            results = franq.score_many([ex for _, ex in batch])
        except (FranqError, ValueError):
            if len(batch) > 1:  # isolate the record that failed
                for item in batch:
                    flush([item])
                return
            line_no, ex = batch[0]
            bad(line_no, ex.id, f"line {line_no}: {sys.exc_info()[1]}")
            return
        for (_, ex), res in zip(batch, results):
            out.write(json.dumps(result_record(ex.stable_id(), res, ex), ensure_ascii=False) + "\n")
            n_ok += 1
        out.flush()

    batch: list[tuple[int, Example]] = []
    try:
        for line_no, text, error in _read_lines(input_path):
            if text is not None and not text.strip():
                continue
            if error:
                bad(line_no, None, error)
                continue
            try:
                batch.append((line_no, parse_json_line(text, f"line {line_no}")))
            except InputError as exc:
                bad(line_no, _peek_id(text), str(exc))
                continue
            if len(batch) >= BATCH_ANSWERS:
                flush(batch)
                batch = []
        flush(batch)
    finally:
        if out is not sys.stdout:
            out.close()
        if errs is not sys.stderr:
            errs.close()
    where = f" (see {errors_path})" if n_bad and errors_path else ""
    click.echo(f"scored {n_ok} answers, {n_bad} bad records{where}", err=True)


def _peek_id(text: str):
    try:
        obj = json.loads(text)
        return obj.get("id") if isinstance(obj, dict) else None
    except ValueError:
        return None


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
