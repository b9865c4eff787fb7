"""The RAG trust suite (paper 004, "In RAG we Trust?"), with FRANQ as the detector.

    franq trust build   QA set + passage pool -> the conditions of Table 1 (poison, distractors)
    franq trust run     each strategy's answer in each condition, scored by FRANQ (cached)
    franq trust report  Tables 2-4 with bootstrap intervals, refusal rates, FRANQ detection, plots

Modules: :mod:`.build` (conditions), :mod:`.metrics` (the paper's metrics, aggregates),
:mod:`.models` (answering models, judges, embeddings, WordNet), :mod:`.run` (the cached
runner), :mod:`.report` (tables and plots). Uses only franq's public API.
"""
from __future__ import annotations

import json
import logging

import click

from franq.cli.options import COUNT
from franq.lm.threads import configure_threads

STRATEGIES = ("baseline", "critical", "hedge", "verify")


def _floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def _fail(exc: Exception):
    raise click.ClickException(str(exc)) from exc


@click.group("trust")
def command():
    """RAG trust suite (paper 004): factuality under poisoned passages, robustness to
    distractors, citation accuracy, four prompt strategies; FRANQ scores every answer."""


@command.command("build")
@click.argument("questions", type=click.Path(exists=True, dir_okay=False))
@click.option("--pool", type=click.Path(exists=True, dir_okay=False), required=True,
              help="JSONL(.gz) of {id, title, text}: distractors, and gold passages by id (nq-open).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), required=True, help="Output JSONL.")
@click.option("--poison", default="0,0.3", show_default=True, help="Poison ratios (no distractors).")
@click.option("--distractors", default="0,8,20", show_default=True, help="Distractor counts (no poison).")
@click.option("--seed", default=0, show_default=True, help="Shuffles questions, fake answers and passage order.")
@click.option("--limit", type=COUNT, help="Keep this many questions (after the seeded shuffle).")
@click.option("--max-passage-words", type=COUNT, help="Cut every passage to this many words.")
@click.option("--chat-model", help="Name of a model on an OpenAI-compatible server that writes the fake answers "
                                   "(default: a same-type answer of another question).")
@click.option("--base-url", help="The server of --chat-model (e.g. http://localhost:8000/v1).")
def build_command(questions, pool, out_path, poison, distractors, seed, limit, max_passage_words, chat_model, base_url):
    """Build the conditions of paper 004's Table 1 from QUESTIONS (JSONL)."""
    import franq

    from . import build as b

    from franq.io import atomic_open, check_outputs

    try:
        check_outputs({"--out": out_path}, {"QUESTIONS": questions, "--pool": pool})
        conds = b.conditions(_floats(poison), _ints(distractors))
        records, pool_records = b.read_jsonl(questions), b.read_jsonl(pool)
        writer, source = None, "other-question"
        if chat_model:
            from .models import ServerGenerator

            if not base_url:
                raise franq.InputError("--chat-model needs --base-url")
            server = ServerGenerator(chat_model, base_url=base_url)
            writer, source = (lambda qs: b.fake_from_chat(qs, server.complete)), f"chat:{chat_model}"
        out, summary = b.build(records, pool_records, conds=conds, seed=seed, limit=limit, fake_writer=writer,
                               fake_source=source, max_passage_words=max_passage_words)
    except (franq.FranqError, ValueError, OSError) as exc:
        _fail(exc)
    with atomic_open(out_path) as fh:
        for r in out:
            fh.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
    click.echo(json.dumps(summary))
    click.echo(f"wrote {len(out)} records to {out_path}")


@command.command("run")
@click.argument("conditions_path", metavar="CONDITIONS", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True, help="Run directory (cache).")
@click.option("--strategies", default=",".join(STRATEGIES), show_default=True)
@click.option("--conditions", "only", help="Comma-separated condition names (default: all in the file).")
@click.option("--limit", type=COUNT, help="The first N questions of the file.")
@click.option("--model", help="Local causal LM path (default: the embedded SmolLM2), or with --base-url the "
                              "server's model name.")
@click.option("--base-url", help="An OpenAI-compatible server that answers instead of a local model.")
@click.option("--max-new-tokens", default=48, show_default=True)
@click.option("--franq/--no-franq", "use_franq", default=True, show_default=True,
              help="Score every answer with FRANQ (needs a local model).")
@click.option("--franq-conditions", help="Score only these conditions with FRANQ (default: all).")
@click.option("--judge", "judge_name", type=click.Choice(["match", "local", "server"]), default="match",
              show_default=True, help="match: offline normalized-answer match (at report time); local: the "
                                      "local model's P(CORRECT); server: --judge-model on --judge-base-url.")
@click.option("--judge-model")
@click.option("--judge-base-url")
def run_command(conditions_path, out_dir, strategies, only, limit, model, base_url, max_new_tokens, use_franq,
                franq_conditions, judge_name, judge_model, judge_base_url):
    """Answer every record of CONDITIONS with each strategy and score it (cached, resumable)."""
    import franq
    from franq.apps.trust import prompts

    from . import build as b
    from . import models as m
    from .run import CONDITION_FIELDS, require, run

    try:
        strategies = [s.strip() for s in strategies.split(",") if s.strip()]
        bad = sorted(set(strategies) - set(prompts.TRUST_STRATEGIES))
        if bad:
            raise franq.InputError(f"--strategies: unknown {bad}; known: {sorted(prompts.TRUST_STRATEGIES)}")
        records = b.read_jsonl(conditions_path)
        require(records, CONDITION_FIELDS, conditions_path)  # before any model loads
        if only:
            names = {c.strip() for c in only.split(",")}
            records = [r for r in records if r["condition"] in names]
        if limit is not None:
            keep = list(dict.fromkeys(r["id"] for r in records))[:limit]
            records = [r for r in records if r["id"] in set(keep)]
        lm = None
        if base_url:
            generator = m.ServerGenerator(model, base_url=base_url, max_new_tokens=max_new_tokens)
        else:
            configure_threads()  # OMP_NUM_THREADS, else the default
            lm = franq.CausalLM.load(model)
            generator = m.LocalGenerator(lm, max_new_tokens=max_new_tokens)
        pipeline = None
        if use_franq:
            if lm is None:
                raise franq.InputError("--franq needs a local model (give --no-franq with --base-url)")
            cfg = franq.FranqConfig().with_overrides({"model.path": model} if model else {})
            pipeline = franq.Franq(cfg, lm)
        judge = {"match": lambda: None, "local": lambda: m.LocalJudge(lm or franq.CausalLM.load(judge_model)),
                 "server": lambda: m.ServerJudge(judge_model, base_url=judge_base_url)}[judge_name]()
        from tqdm import tqdm

        counts = run(records, generator=generator, out_dir=out_dir, strategies=strategies, franq_pipeline=pipeline,
                     franq_conditions=franq_conditions.split(",") if franq_conditions else None, judge=judge,
                     progress=lambda total: tqdm(total=total, desc="trust run", unit="answer"))
    except (franq.FranqError, ValueError, OSError) as exc:
        _fail(exc)
    click.echo(json.dumps(counts))


@command.command("report")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--out", "out_dir", type=click.Path(file_okay=False), help="Where to write (default: RUN_DIR).")
@click.option("--factuality-weights", default="0.5,0.2,0.3", show_default=True, help="Judge, FakeOverlap, METEOR.")
@click.option("--robustness-weights", default="0.6,0.2,0.2", show_default=True, help="Judge, cosine, token F1.")
@click.option("--embedding-model", help="Local all-MiniLM-L6-v2 directory (default: the installed package).")
@click.option("--bootstrap", "n_boot", default=1000, show_default=True)
@click.option("--plots/--no-plots", default=True, show_default=True)
def report_command(run_dir, out_dir, factuality_weights, robustness_weights, embedding_model, n_boot, plots):
    """Tables 2-4 (bootstrap 95% intervals), refusal rates, FRANQ detection, plots."""
    import franq

    from .trust_metrics import Weights
    from .report import write_report

    logging.getLogger("sentence_transformers").setLevel(logging.WARNING)
    try:
        weights = Weights(tuple(_floats(factuality_weights)), tuple(_floats(robustness_weights)))
        paths = write_report(run_dir, out_dir or run_dir, weights=weights, embedding_model=embedding_model,
                             n_boot=n_boot, plots=plots)
    except (franq.FranqError, ValueError, OSError) as exc:
        _fail(exc)
    for p in paths:
        click.echo(f"wrote {p}")
