"""``franq sufficiency IN.jsonl -o OUT.jsonl``: is the context sufficient? (paper 003)

Each input line is ``{"id"?, "question", "passages", "gold_answers"?, "gold_passages"?,
"sufficient"?}``; each output line is the id, ``p_sufficient`` (the rater's probability,
0/1 for the autorater and contains_gold), ``sufficient_pred`` (``p >= --threshold``), the
rater's name, and the record's labels (and, with --pass-through, its other fields).
Bad records go to the errors file (or stderr) and the run carries on.
"""
from __future__ import annotations

import contextlib
import json
import sys

import click

import franq
from franq.apps import answering
from franq.cli.options import COUNT, PROBABILITY
from franq.io import atomic_open, check_outputs

BATCH = 16


@click.command("sufficiency")
@click.argument("input_path", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, allow_dash=True), help="Output JSONL.")
@click.option("--rater", type=click.Choice(list(answering.RATERS)), default="label", show_default=True,
              help="label: FLAMe-style label probability (1600-token chunks); autorater: 003's 1-shot CoT prompt; "
                   "contains_gold / nli_gold: reference-based, need 'gold_answers'.")
@click.option("--prompt", type=click.Choice(["corrected", "verbatim"]), default="corrected", show_default=True,
              help="label rater: the corrected prompt, or 003's verbatim one (its label definitions are swapped).")
@click.option("--timestamp", default=None, help="autorater: the queries' timestamp (default: today).")
@click.option("--threshold", type=PROBABILITY, default=None,
              help="sufficient_pred = p >= this (default: the rater's: 0.05 for nli_gold as in 003, else 0.5).")
@click.option("--chunk-tokens", type=COUNT, default=1600, show_default=True, help="label rater: tokens per chunk.")
@click.option("--model", help="Local causal LM for label / autorater (default: the embedded model).")
@click.option("--faithfulness", help="nli_gold: the faithfulness backend (default: the config's, "
              f"{franq.FranqConfig().faithfulness.name}).")
@click.option("--base-url", help="An OpenAI-compatible server for label / autorater instead of a local model.")
@click.option("--server-model", help="The model name to ask the server for (with --base-url).")
@click.option("--pass-through", is_flag=True, help="Copy unknown input fields to the output instead of rejecting them.")
@click.option("--errors", "errors_path", type=click.Path(dir_okay=False), help="Where bad records go (default: stderr).")
def sufficiency(input_path, output, rater, prompt, timestamp, threshold, chunk_tokens, model, faithfulness, base_url,
                server_model, pass_through, errors_path):
    """Rate whether each record's passages are sufficient context to answer its question."""
    overrides = {k: v for k, v in {"model.path": model, "faithfulness.name": faithfulness}.items() if v}
    try:
        check_outputs({"-o": output, "--errors": errors_path}, {"input": input_path})
        config = franq.FranqConfig().with_overrides(overrides)
        r = answering.make_rater(rater, config, base_url=base_url, server_model=server_model, prompt=prompt,
                                 timestamp=timestamp, threshold=threshold, chunk_tokens=chunk_tokens)
    except franq.FranqError as exc:
        raise click.ClickException(str(exc)) from None
    threshold = getattr(r, "threshold", 0.5) if threshold is None else threshold
    with contextlib.ExitStack() as files:  # each output replaced whole at the end (a failed run leaves them as they were)
        out = files.enter_context(atomic_open(output))
        errs = files.enter_context(atomic_open(errors_path)) if errors_path else sys.stderr
        n_ok, n_bad = _rate_file(r, input_path, out, errs, threshold, pass_through)
    click.echo(f"rated {n_ok} record(s) with {r.name}; {n_bad} bad record(s)", err=True)


def _rate_file(r, input_path: str, out, errs, threshold: float, pass_through: bool) -> tuple[int, int]:
    n_ok = n_bad = 0
    batch: list = []

    def rate_batch() -> None:
        """Rate the batch at once; when that fails (e.g. a record without gold answers),
        rate its records one by one so that only the bad ones become error lines."""
        nonlocal n_ok, n_bad
        try:
            scored = list(zip(batch, r.rate([rec.item for rec in batch])))
        except franq.FranqError:
            scored = []
            for rec in batch:
                try:
                    scored.append((rec, r.rate([rec.item])[0]))
                except franq.FranqError as exc:
                    _error(errs, rec.line, rec.id, str(exc))
                    n_bad += 1
        for rec, p in scored:
            _write(out, rec, float(p), r.name, threshold)
            n_ok += 1
        batch.clear()

    try:
        for rec in answering.read_qa_records(input_path, pass_through=pass_through):
            if rec.error:
                _error(errs, rec.line, rec.id, rec.error)
                n_bad += 1
                continue
            batch.append(rec)
            if len(batch) >= BATCH:
                rate_batch()
        if batch:
            rate_batch()
    except franq.FranqError as exc:
        raise click.ClickException(str(exc)) from None
    return n_ok, n_bad


def _error(errs, line: int, ident, reason: str) -> None:
    errs.write(json.dumps({"line": line, "id": ident, "error": reason}, ensure_ascii=False) + "\n")


def _write(out, rec, p: float, name: str, threshold: float) -> None:
    line = {"id": rec.id, "p_sufficient": p, "sufficient_pred": p >= threshold, "rater": name, **rec.keep}
    out.write(json.dumps(line, ensure_ascii=False) + "\n")
    out.flush()
