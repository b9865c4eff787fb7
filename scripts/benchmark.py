"""The evaluation harness (issue 7): the paper's tables on public data with the embedded model.

    python scripts/benchmark.py observe long  --split test            # model passes, cached
    python scripts/benchmark.py observe short --split test --variant clean
    python scripts/benchmark.py report --out DIR                       # tables + plots into DIR
    python scripts/benchmark.py report --update-committed              # rewrite the committed results
    python scripts/benchmark.py all --quick --out DIR                  # CI smoke test

``observe`` runs the model and appends one record per answer to a resumable cache under
``benchmarks/cache/eval/`` (rerunning skips what is done); ``report`` computes every method
from the caches (no model passes) and writes ``paper-tables*.{md,json}`` and PNG plots into
``--out`` (default ``benchmarks/cache/report/``, not tracked). Only ``--update-committed``
writes the tracked ``benchmarks/results/`` and the results section of docs/BENCHMARKS.md.
See docs/BENCHMARKS.md.
"""
from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import logging
import os
import random
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from franq.evaluation.data import load_examples, load_nq_open  # noqa: E402
from franq.evaluation.observe import long_key, observe_long, observe_short, run_cached, short_key  # noqa: E402
from franq.evaluation.units import long_units, short_units  # noqa: E402

CACHE = ROOT / "benchmarks" / "cache" / "eval"
NQ = ROOT / "datasets" / "nq-open"
EXPERTQA = ROOT / "datasets" / "expertqa"
RESULTS = ROOT / "benchmarks" / "results"
REPORT = ROOT / "benchmarks" / "cache" / "report"
DOC = ROOT / "docs" / "BENCHMARKS.md"
DOC_BEGIN, DOC_END = "<!-- benchmark.py report: begin -->", "<!-- benchmark.py report: end -->"
SNAPSHOTS = ROOT / "datasets" / "generations"
USE_SNAPSHOTS = True
SIZES = {"long": {"train": 120, "test": 217}, "short": {"train": 100, "test": 200}}
QUICK = {"long": {"train": 1, "test": 1}, "short": {"train": 1, "test": 1}}


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", name).strip("-")


def long_items(split: str, n: int | None):
    """ExpertQA answers; train is the seeded sample of ``scripts/sample_records.py --seed 0``."""
    rows = load_examples(EXPERTQA / f"{split}.jsonl")
    if split == "train":
        random.Random(0).shuffle(rows)
    return rows[:n] if n is not None else rows


_LOADED: dict = {}  # model name -> CausalLM, so `all` loads it once


def observe(args) -> None:
    from franq.lm import CausalLM
    from franq.evaluation.p_true import PTrue

    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    if args.model not in _LOADED:
        _LOADED[args.model] = CausalLM.load(args.model)
    lm = _LOADED[args.model]
    ptrue = PTrue(lm)
    cache = Path(getattr(args, "cache", None) or CACHE)
    cache.mkdir(parents=True, exist_ok=True)
    n = args.limit if args.limit is not None else SIZES[args.setting][args.split]
    if args.setting == "long":
        from franq.config import FranqConfig
        from franq.pipeline import Franq

        franq = Franq(FranqConfig.from_dict({"calibration": {"calibrator": "none"}}), lm)
        path = cache / f"long-expertqa.{slug(lm.name)}.{slug(franq.faithfulness.name)}.jsonl"
        items = [(long_key(ident, franq.preset("long").stack), ex) for ident, ex, _ in long_items(args.split, n)]
        for _ in run_cached(str(path), items, lambda ex: observe_long(franq, ptrue, ex), known=snapshot(path)):
            pass
    else:
        from franq.evidence.samples import SamplingOptions

        options = SamplingOptions(max_new_tokens=args.max_new_tokens)
        path = cache / f"short-nq-open.{slug(lm.name)}.jsonl"
        items = [(short_key(it.id, it.passage_ids, options), it)
                 for it in load_nq_open(NQ, args.split, args.variant, limit=n)]
        for _ in run_cached(str(path), items, lambda it: observe_short(lm, ptrue, it.question, it.passages,
                                                                       options=options), known=snapshot(path)):
            pass


def snapshot(path: Path) -> dict[str, dict]:
    """The committed snapshot of an observe cache, by key (empty when there is none, or
    with ``--fresh``)."""
    if not USE_SNAPSHOTS:
        return {}
    return _read_jsonl(SNAPSHOTS / (path.name + ".gz"), gzip.open)


def _read_jsonl(source: Path, opener) -> dict[str, dict]:
    out = {}
    if source.exists():
        with opener(source, "rt", encoding="utf-8") as f:
            for line in f:
                if line.endswith("\n"):  # a line being appended is skipped
                    rec = json.loads(line)
                    out[rec["id"]] = rec
    return out


def read_cache(path: Path) -> dict[str, dict]:
    """Records of an observe cache by key (read-only: an observe run may be appending),
    plus those of its committed snapshot ``datasets/generations/<name>.gz``, so a fresh
    clone reproduces the report without running the model."""
    return snapshot(path) | _read_jsonl(path, open)


def long_split(split: str, n: int, cache: dict, stack: dict):
    pairs, missing = [], 0
    for ident, _, rec in long_items(split, n):
        obs = cache.get(long_key(ident, stack))
        if obs is None:
            missing += 1
        else:
            pairs.append((rec, obs))
    units, skipped = long_units(pairs)
    return units, {"answers": len(pairs), "not_observed": missing, **skipped}


def short_split(split: str, variant: str, n: int, cache: dict, options, model_name: str, faithfulness):
    items, records, missing = [], [], 0
    for it in load_nq_open(NQ, split, variant, limit=n):
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


def evaluate_setting(key: str, title: str, setting, train, test, out_dir: Path, *, n_boot: int) -> dict:
    from franq.evaluation.methods import FRANQ, GENERAL, RAG, run_methods
    from franq.evaluation.report import (evaluate, plot_rejection_curves, plot_reliability, render_markdown,
                                         render_text, results_to_json, MethodResult)

    if not len(test):
        print(f"{title}: no observed test units yet; skipped")
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
    print(render_text(results, title=title))
    series = {s.name: (s.test, y) for s in scores if s.test is not None and (s.group == FRANQ or s.name == best)}
    plots = {}
    if len(set(y.tolist())) == 2:
        plots["rejection"] = plot_rejection_curves(series, out_dir / f"paper-tables-{key}-rejection.png",
                                                   title=f"{key}: rejection curves", max_rejection=1.0).name
        prob = {n: v for n, v in series.items() if all(s.probabilities for s in scores if s.name == n)}
        plots["reliability"] = plot_reliability(prob, out_dir / f"paper-tables-{key}-reliability.png",
                                                title=f"{key}: reliability diagrams").name
    return {"key": key, "title": title, "markdown": render_markdown(results, title=title),
            "results": results_to_json(results), "best_baseline": best, "calibrator_fits": reports, "plots": plots,
            "train": describe(train), "test": describe(test)}


def report(args) -> None:
    from franq.calibrate import stack_key
    from franq.evaluation.methods import LONG, SHORT
    from franq.faithfulness.combined import CombinedFaithfulness
    from franq.evidence.samples import SamplingOptions
    from franq.lm.load import EMBEDDED_NAME

    model_name = args.model or EMBEDDED_NAME
    faith = CombinedFaithfulness(lm_name=model_name)
    cache_dir = Path(args.cache)
    sizes = QUICK if args.quick else SIZES
    out_dir = args.out
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    sections, data = [], {}
    stack = stack_key(model=model_name, faithfulness=faith.name, uq_faith=LONG.faith_scorer,
                      uq_unfaith=LONG.unfaith_scorer, mode="long")
    long_cache = read_cache(cache_dir / f"long-expertqa.{slug(model_name)}.{slug(faith.name)}.jsonl")
    train, dtrain = long_split("train", sizes["long"]["train"], long_cache, stack)
    test, dtest = long_split("test", sizes["long"]["test"], long_cache, stack)
    data["long"] = {"train": dtrain, "test": dtest}
    sections.append(evaluate_setting("long", "Long-form QA (ExpertQA, observer mode)", LONG, train, test, out_dir,
                                     n_boot=args.n_boot))
    options = SamplingOptions(max_new_tokens=args.max_new_tokens)
    short_cache = read_cache(cache_dir / f"short-nq-open.{slug(model_name)}.jsonl")
    for variant, title in (("clean", "Short-form QA (nq-open, gold + 4 BM25 distractors)"),
                           ("corrupted", "Short-form QA, corrupted retrieval (gold replaced for 50%)")):
        train, dtrain = short_split("train", variant, sizes["short"]["train"], short_cache, options, model_name, faith)
        test, dtest = short_split("test", variant, sizes["short"]["test"], short_cache, options, model_name, faith)
        data[f"short-{variant}"] = {"train": dtrain, "test": dtest}
        sections.append(evaluate_setting(f"short-{variant}", title, SHORT, train, test, out_dir, n_boot=args.n_boot))
    command = "python scripts/benchmark.py " + " ".join(sys.argv[1:]) if argv_is_cli() else "scripts/benchmark.py"
    meta = {"command": command, "date": time.strftime("%Y-%m-%d"), "model": model_name, "faithfulness": faith.name,
            "sizes": sizes, "data": data, "report_seconds": round(time.perf_counter() - started, 1),
            "n_boot": args.n_boot, "max_new_tokens": args.max_new_tokens}
    name = "paper-tables-quick" if args.quick else "paper-tables"
    with open(out_dir / f"{name}.json", "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "sections": sections}, f, indent=1, allow_nan=False, default=_nan_none)
    with open(out_dir / f"{name}.md", "w", encoding="utf-8") as f:
        f.write(f"# Benchmark results ({meta['date']})\n\nCommand: `{command}` ({meta['report_seconds']} s from the "
                f"caches)\n\nModel `{model_name}`, faithfulness `{faith.name}`, short-form answers and samples up to "
                f"{args.max_new_tokens} tokens, {args.n_boot} bootstrap resamples.\n\n")
        f.write(markdown_body(sections, data, image_dir=""))
    print(f"wrote {out_dir / (name + '.md')} and {name}.json in {meta['report_seconds']} s")
    if args.update_committed:
        image_dir = Path(os.path.relpath(RESULTS, DOC.parent)).as_posix() + "/"
        body = markdown_body(sections, data, image_dir=image_dir)
        DOC.write_text(replace_block(DOC.read_text(encoding="utf-8"), body, str(DOC.relative_to(ROOT))),
                       encoding="utf-8")
        print(f"rewrote the results section of {DOC.relative_to(ROOT)}; check its prose against the new numbers")


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


def output_dir(ap: argparse.ArgumentParser, args) -> Path:
    """``--out`` (default ``benchmarks/cache/report``); the tracked results folder only with
    ``--update-committed``, so that a report never rewrites committed files unasked."""
    if args.update_committed:
        if args.out is not None:
            ap.error(f"--update-committed writes {RESULTS.relative_to(ROOT)}/: leave out --out")
        if args.quick:
            ap.error("--update-committed: the --quick subset is never committed")
        if importlib.util.find_spec("xgboost") is None:
            ap.error("--update-committed: the committed tables have the XGBoost rows; install xgboost first")
        return RESULTS
    out = (args.out or REPORT).resolve()
    if out == RESULTS or RESULTS in out.parents:
        ap.error(f"--out {args.out}: {RESULTS.relative_to(ROOT)}/ holds the committed results; "
                 "rewrite them with --update-committed")
    return out


def argv_is_cli() -> bool:
    return Path(sys.argv[0]).name == "benchmark.py"


def _common(parser, *, observe: bool, report: bool) -> None:
    parser.add_argument("--model", default=None, help="model path or name (default: the embedded model)")
    parser.add_argument("--cache", default=str(CACHE), help="folder of the observe caches")
    parser.add_argument("--fresh", action="store_true", help="ignore the committed snapshots in datasets/generations")
    parser.add_argument("--max-new-tokens", type=int, default=16, help="short-form answer and sample length")
    if observe:
        parser.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch's default)")
    if report:
        parser.add_argument("--quick", action="store_true", help="the CI-sized subset (a smoke test of every stage)")
        parser.add_argument("--out", type=Path, default=None,
                            help=f"folder for the tables, JSON and plots (default: {REPORT.relative_to(ROOT)}/)")
        parser.add_argument("--update-committed", action="store_true",
                            help=f"write into the tracked {RESULTS.relative_to(ROOT)}/ and rewrite the results section "
                                 f"of {DOC.relative_to(ROOT)} (instead of --out)")
        parser.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples for the 95%% intervals")


def main(argv=None) -> None:
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    ob = sub.add_parser("observe", help="run the model passes into the cache")
    ob.add_argument("setting", choices=["long", "short"])
    ob.add_argument("--split", choices=["train", "test"], required=True)
    ob.add_argument("--variant", choices=["clean", "corrupted"], default="clean")
    ob.add_argument("--limit", type=int, default=None, help="first N items (default: the benchmark size)")
    _common(ob, observe=True, report=False)
    _common(sub.add_parser("report", help="compute every method from the caches; write tables and plots"),
            observe=False, report=True)
    _common(sub.add_parser("all", help="observe everything that is missing, then report"), observe=True, report=True)
    args = ap.parse_args(argv)
    if args.command != "observe":
        args.out = output_dir(ap, args)
    global USE_SNAPSHOTS
    USE_SNAPSHOTS = not args.fresh
    if args.command == "observe":
        observe(args)
    elif args.command == "report":
        report(args)
    else:
        sizes = QUICK if args.quick else SIZES
        for setting, split, variant in (("long", "train", "clean"), ("long", "test", "clean"),
                                        ("short", "train", "clean"), ("short", "test", "clean"),
                                        ("short", "train", "corrupted"), ("short", "test", "corrupted")):
            observe(argparse.Namespace(setting=setting, split=split, variant=variant, model=args.model,
                                       limit=sizes[setting][split], max_new_tokens=args.max_new_tokens,
                                       threads=args.threads, cache=args.cache))
        report(args)


if __name__ == "__main__":
    main()
