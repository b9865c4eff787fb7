"""The paper's tables on public data with the embedded model (docs/BENCHMARKS.md), run by
``franq bench observe | report | all``.

``observe`` runs the model and appends one record per answer to a resumable cache under
``benchmarks/cache/eval/`` (rerunning skips what is done); ``report`` computes every method
from the caches (no model passes) and writes ``paper-tables.{md,json}`` and PNG plots into
``out`` (default ``benchmarks/cache/report/``, not tracked). Only ``update_committed`` writes
the tracked ``benchmarks/results/`` and the results section of docs/BENCHMARKS.md. Every path
is under :class:`Layout`'s ``root`` (a franq checkout: ``datasets/``, ``benchmarks/``, ``docs/``).
"""
from __future__ import annotations

import gzip
import importlib.util
import json
import os
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from franq.evaluation.data import expertqa_seen_in_train, load_examples, load_nq_open
from franq.evaluation.observe import long_key, observe_long, observe_short, run_cached, short_key
from franq.evaluation.units import long_units, short_units

DOC_BEGIN, DOC_END = "<!-- franq bench report: begin -->", "<!-- franq bench report: end -->"
SIZES = {"long": {"train": 120, "test": 205}, "short": {"train": 100, "test": 200}}
QUICK = {"long": {"train": 1, "test": 1}, "short": {"train": 1, "test": 1}}
NAME = "paper-tables"
STAGES = (("long", "train", "clean"), ("long", "test", "clean"), ("short", "train", "clean"),
          ("short", "test", "clean"), ("short", "train", "corrupted"), ("short", "test", "corrupted"))


class BenchError(ValueError):
    """A benchmark run asked for something it must not do (e.g. write committed files unasked)."""


@dataclass(frozen=True)
class Layout:
    """Where the benchmark reads and writes, under ``root`` (a franq checkout)."""

    root: Path

    @property
    def cache(self) -> Path:
        return self.root / "benchmarks" / "cache" / "eval"

    @property
    def report(self) -> Path:
        return self.root / "benchmarks" / "cache" / "report"

    @property
    def results(self) -> Path:
        return self.root / "benchmarks" / "results"

    @property
    def doc(self) -> Path:
        return self.root / "docs" / "BENCHMARKS.md"

    @property
    def nq(self) -> Path:
        return self.root / "datasets" / "nq-open"

    @property
    def expertqa(self) -> Path:
        return self.root / "datasets" / "expertqa"

    @property
    def snapshots(self) -> Path:
        return self.root / "datasets" / "generations"

    def rel(self, path: Path) -> str:
        return Path(os.path.relpath(path, self.root)).as_posix()


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", name).strip("-")


def long_items(layout: Layout, split: str, n: int | None):
    """ExpertQA answers; train is the seeded sample of ``franq bench sample-records ... --seed 0``;
    test leaves out the 12 answers that are also in train
    (:func:`~franq.evaluation.data.expertqa_seen_in_train`)."""
    rows = load_examples(layout.expertqa / f"{split}.jsonl")
    if split == "train":
        random.Random(0).shuffle(rows)
    else:
        seen = expertqa_seen_in_train(layout.expertqa.parent)
        rows = [row for row in rows if row[0] not in seen]
    return rows[:n] if n is not None else rows


_LOADED: dict = {}  # model name -> CausalLM, so `all` loads it once


def observe(layout: Layout, setting: str, split: str, *, variant: str = "clean", model: str | None = None,
            limit: int | None = None, max_new_tokens: int = 16, threads: int | None = None, cache: Path | None = None,
            fresh: bool = False) -> None:
    """Run the model passes of one setting and split into the cache (resumable)."""
    from franq.lm import CausalLM
    from franq.evaluation.p_true import PTrue

    from franq.lm.threads import configure_threads

    configure_threads(threads)
    if model not in _LOADED:
        _LOADED[model] = CausalLM.load(model)
    lm = _LOADED[model]
    ptrue = PTrue(lm)
    cache = Path(cache or layout.cache)
    cache.mkdir(parents=True, exist_ok=True)
    n = limit if limit is not None else SIZES[setting][split]
    if setting == "long":
        from franq.config import FranqConfig
        from franq.pipeline import Franq

        # the paper-style tables' stack: combined-v1, the backend of the committed generations
        # (the report reads them under that name), not the library's default
        franq = Franq(FranqConfig.from_dict({"calibration": {"calibrator": "none"},
                                             "faithfulness": {"name": "combined"}}), lm)
        path = cache / f"long-expertqa.{slug(lm.name)}.{slug(franq.faithfulness.name)}.jsonl"
        items = [(long_key(ident, franq.preset("long").stack), ex) for ident, ex, _ in long_items(layout, split, n)]
        known = snapshot(layout, path, fresh=fresh)
        for _ in run_cached(str(path), items, lambda ex: observe_long(franq, ptrue, ex), known=known):
            pass
    else:
        from franq.evidence.samples import SamplingOptions

        options = SamplingOptions(max_new_tokens=max_new_tokens)
        path = cache / f"short-nq-open.{slug(lm.name)}.jsonl"
        items = [(short_key(it.id, it.passage_ids, options), it)
                 for it in load_nq_open(layout.nq, split, variant, limit=n)]
        known = snapshot(layout, path, fresh=fresh)
        for _ in run_cached(str(path), items, lambda it: observe_short(lm, ptrue, it.question, it.passages,
                                                                       options=options), known=known):
            pass


def snapshot(layout: Layout, path: Path, *, fresh: bool = False) -> dict[str, dict]:
    """The committed snapshot of an observe cache, by key (empty when there is none, or
    with ``fresh``)."""
    return {} if fresh else read_records(layout.snapshots / (path.name + ".gz"), gzip.open)


def read_records(source: Path, opener=open) -> dict[str, dict]:
    """The records of a JSONL file (``opener``: ``open``, or ``gzip.open`` for a snapshot) by
    ``id``; none when it does not exist; a last line still being appended is left out."""
    out = {}
    if source.exists():
        with opener(source, "rt", encoding="utf-8") as f:
            for line in f:
                if line.endswith("\n"):  # a line being appended is skipped
                    rec = json.loads(line)
                    out[rec["id"]] = rec
    return out


def read_cache(layout: Layout, path: Path, *, fresh: bool = False) -> dict[str, dict]:
    """Records of an observe cache by key (read-only: an observe run may be appending),
    plus those of its committed snapshot ``datasets/generations/<name>.gz``, so a fresh
    clone reproduces the report without running the model."""
    return snapshot(layout, path, fresh=fresh) | read_records(path, open)


def long_split(layout: Layout, split: str, n: int, cache: dict, stack: dict):
    pairs, missing = [], 0
    for ident, _, rec in long_items(layout, split, n):
        obs = cache.get(long_key(ident, stack))
        if obs is None:
            missing += 1
        else:
            pairs.append((rec, obs))
    units, skipped = long_units(pairs)
    return units, {"answers": len(pairs), "not_observed": missing, **skipped}


def short_split(layout: Layout, split: str, variant: str, n: int, cache: dict, options, model_name: str, faithfulness):
    items, records, missing = [], [], 0
    for it in load_nq_open(layout.nq, split, variant, limit=n):
        rec = cache.get(short_key(it.id, it.passage_ids, options))
        if rec is None:
            missing += 1
        else:
            items.append(it)
            records.append(rec)
    units, skipped = short_units(items, records, model_name=model_name, faithfulness=faithfulness)
    return units, {"questions": len(items), "not_observed": missing, **skipped}


def describe(units) -> dict:
    return {"units": len(units), "true": int(units.is_true.sum()), "false": int(len(units) - units.is_true.sum())}


def evaluate_setting(key: str, title: str, setting, train, test, out_dir: Path, *, n_boot: int,
                     echo: Callable[[str], None] = print) -> dict:
    """Every method of ``setting`` fitted on ``train``, measured on ``test``: the section's
    table (intervals on the FRANQ rows and the best baseline by PRR), plots and fit reports."""
    from franq.evaluation.methods import FRANQ, GENERAL, RAG, run_methods
    from franq.evaluation.tables import (evaluate, plot_rejection_curves, plot_reliability, render_differences,
                                         render_markdown, render_text, results_to_json, MethodResult)

    if not len(test):
        echo(f"{title}: no observed test units yet; skipped")
        return {"key": key, "title": title, "markdown": f"### {title}\n\nNo observed test units.", "results": [],
                "best_baseline": None, "calibrator_fits": {}, "plots": {}, "train": {}, "test": {}}
    scores, reports = run_methods(setting, train, test)
    y = test.is_true
    first = {}
    for s in scores:
        if s.test is not None:
            first[s.name] = evaluate(s.name, s.group, s.test, y, probabilities=s.probabilities, note=s.note)
    baselines = [r for r in first.values() if r.group in (GENERAL, RAG) and np.isfinite(r.values["PRR"])]
    best = max(baselines, key=lambda r: r.values["PRR"]).name if baselines else None
    results = []
    for s in scores:
        if s.test is None:
            results.append(MethodResult(s.name, s.group, {c: float("nan") for c in ("PR-AUC", "PRR", "AUROC", "ECE")},
                                        None, len(y), s.note))
        elif s.group == FRANQ or s.name == best:
            results.append(evaluate(s.name, s.group, s.test, y, probabilities=s.probabilities, ci=True,
                                    n_boot=n_boot, seed=0,
                                    note="; ".join(filter(None, [s.note, "best baseline by PRR" if s.name == best else ""]))))
        else:
            results.append(first[s.name])
    echo(render_text(results, title=title))
    series = {s.name: (s.test, y) for s in scores if s.test is not None and (s.group == FRANQ or s.name == best)}
    plots = {}
    if len(set(y.tolist())) == 2:
        plots["rejection"] = plot_rejection_curves(series, out_dir / f"{NAME}-{key}-rejection.png",
                                                   title=f"{key}: rejection curves", max_rejection=1.0).name
        prob = {n: v for n, v in series.items() if all(s.probabilities for s in scores if s.name == n)}
        plots["reliability"] = plot_reliability(prob, out_dir / f"{NAME}-{key}-reliability.png",
                                                title=f"{key}: reliability diagrams").name
    return {"key": key, "title": title,
            "markdown": "\n\n".join(filter(None, [render_markdown(results, title=title, settings=setting.described),
                                                   render_differences(setting.differences)])),
            "results": results_to_json(results), "best_baseline": best, "calibrator_fits": reports, "plots": plots,
            "train": describe(train), "test": describe(test)}


def output_dir(layout: Layout, out: Path | None, *, update_committed: bool, quick: bool) -> Path:
    """``out`` (default ``benchmarks/cache/report``); the tracked results folder only with
    ``update_committed``, so that a report never rewrites committed files unasked."""
    results = layout.results.resolve()
    if update_committed:
        if out is not None:
            raise BenchError(f"--update-committed writes {layout.rel(layout.results)}/: leave out --out")
        if quick:
            raise BenchError("--update-committed: the --quick subset is never committed")
        if importlib.util.find_spec("xgboost") is None:
            raise BenchError("--update-committed: the committed tables have the XGBoost rows; install xgboost first")
        return layout.results
    resolved = Path(out or layout.report).resolve()
    if resolved == results or results in resolved.parents:
        raise BenchError(f"--out {out}: {layout.rel(layout.results)}/ holds the committed results; "
                         "rewrite them with --update-committed")
    return resolved


def report(layout: Layout, out_dir: Path, *, command: str, model: str | None = None, cache: Path | None = None,
           fresh: bool = False, max_new_tokens: int = 16, quick: bool = False, n_boot: int = 1000,
           update_committed: bool = False, echo: Callable[[str], None] = print) -> Path:
    """Every table from the caches into ``out_dir`` (from :func:`output_dir`); with
    ``update_committed`` also the results block of docs/BENCHMARKS.md. Returns the Markdown file."""
    from franq.calibrate import stack_key
    from franq.evaluation.methods import LONG, SHORT
    from franq.faithfulness.combined import CombinedFaithfulness
    from franq.evidence.samples import SamplingOptions
    from franq.lm.load import EMBEDDED_NAME

    model_name = model or EMBEDDED_NAME
    faith = CombinedFaithfulness(lm_name=model_name)
    cache_dir = Path(cache or layout.cache)
    sizes = QUICK if quick else SIZES
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    sections, data = [], {}
    stack = stack_key(model=model_name, faithfulness=faith.name, uq_faith=LONG.faith_scorer,
                      uq_unfaith=LONG.unfaith_scorer, mode="long")
    long_cache = read_cache(layout, cache_dir / f"long-expertqa.{slug(model_name)}.{slug(faith.name)}.jsonl",
                            fresh=fresh)
    train, dtrain = long_split(layout, "train", sizes["long"]["train"], long_cache, stack)
    test, dtest = long_split(layout, "test", sizes["long"]["test"], long_cache, stack)
    data["long"] = {"train": dtrain, "test": dtest}
    sections.append(evaluate_setting("long", "Long-form QA (ExpertQA, observer mode)", LONG, train, test, out_dir,
                                     n_boot=n_boot, echo=echo))
    options = SamplingOptions(max_new_tokens=max_new_tokens)
    short_cache = read_cache(layout, cache_dir / f"short-nq-open.{slug(model_name)}.jsonl", fresh=fresh)
    for variant, title in (("clean", "Short-form QA (nq-open, gold + 4 BM25 distractors)"),
                           ("corrupted", "Short-form QA, corrupted retrieval (gold replaced for 50%)")):
        train, dtrain = short_split(layout, "train", variant, sizes["short"]["train"], short_cache, options,
                                    model_name, faith)
        test, dtest = short_split(layout, "test", variant, sizes["short"]["test"], short_cache, options,
                                  model_name, faith)
        data[f"short-{variant}"] = {"train": dtrain, "test": dtest}
        sections.append(evaluate_setting(f"short-{variant}", title, SHORT, train, test, out_dir, n_boot=n_boot,
                                         echo=echo))
    meta = {"command": command, "date": time.strftime("%Y-%m-%d"), "model": model_name, "faithfulness": faith.name,
            "sizes": sizes, "data": data, "report_seconds": round(time.perf_counter() - started, 1),
            "n_boot": n_boot, "max_new_tokens": max_new_tokens}
    name = f"{NAME}-quick" if quick else NAME
    with open(out_dir / f"{name}.json", "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "sections": sections}, f, indent=1, allow_nan=False, default=_nan_none)
    with open(out_dir / f"{name}.md", "w", encoding="utf-8") as f:
        f.write(f"# Benchmark results ({meta['date']})\n\nCommand: `{command}` ({meta['report_seconds']} s from the "
                f"caches)\n\nModel `{model_name}`, faithfulness `{faith.name}`, short-form answers and samples up to "
                f"{max_new_tokens} tokens, {n_boot} bootstrap resamples.\n\n")
        f.write(markdown_body(sections, data, image_dir=""))
    echo(f"wrote {out_dir / (name + '.md')} and {name}.json in {meta['report_seconds']} s")
    if update_committed:
        image_dir = Path(os.path.relpath(layout.results, layout.doc.parent)).as_posix() + "/"
        body = markdown_body(sections, data, image_dir=image_dir)
        layout.doc.write_text(replace_block(layout.doc.read_text(encoding="utf-8"), body, layout.rel(layout.doc)),
                              encoding="utf-8")
        echo(f"rewrote the results section of {layout.rel(layout.doc)}; check its prose against the new numbers")
    return out_dir / f"{name}.md"


def markdown_body(sections: list[dict], data: dict, *, image_dir: str) -> str:
    """The data-size table, then each section's table and plots (``image_dir`` + PNG name)."""
    lines = ["| setting | split | answers observed | not observed | left out | units | true | false |",
             "|---|---|---:|---:|---|---:|---:|---:|"]
    for sec in sections:
        for split in ("train", "test"):
            d = dict(data[sec["key"]][split])
            observed = d.pop("answers", d.pop("questions", 0))
            missing = d.pop("not_observed", 0)
            u = sec[split] or {"units": 0, "true": 0, "false": 0}
            left = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in d.items()) or "–"
            lines.append(f"| {sec['key']} | {split} | {observed} | {missing} | {left} | {u['units']} | {u['true']} "
                         f"| {u['false']} |")
    out = "\n".join(lines) + "\n\n"
    for sec in sections:
        out += sec["markdown"] + "\n\n"
        for kind, png in sec["plots"].items():
            out += f"![{sec['title']}: {kind}]({image_dir}{png})\n\n"
    return out


def replace_block(text: str, body: str, where: str) -> str:
    """``text`` with what lies between the DOC_BEGIN and DOC_END lines replaced by ``body``."""
    try:
        head, rest = text.split(DOC_BEGIN + "\n", 1)
        _, tail = rest.split(DOC_END + "\n", 1)
    except ValueError:
        raise ValueError(f"{where}: expected one line {DOC_BEGIN!r} and, after it, one line {DOC_END!r}") from None
    return f"{head}{DOC_BEGIN}\n{body}{DOC_END}\n{tail}"


def _nan_none(obj):
    raise TypeError(f"not JSON serializable: {obj!r}")
