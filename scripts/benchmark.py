"""The evaluation harness (issue 7): the paper's tables on public data with the embedded model.

    python scripts/benchmark.py observe long  --split test            # model passes, cached
    python scripts/benchmark.py observe short --split test --variant clean
    python scripts/benchmark.py report                                 # tables + plots
    python scripts/benchmark.py all --quick                            # CI smoke test

``observe`` runs the model and appends one record per answer to a resumable cache under
``benchmarks/cache/eval/`` (rerunning skips what is done); ``report`` computes every method
from the caches (no model passes) and writes ``benchmarks/results/issue7*.{md,json}`` and
PNG plots. See docs/BENCHMARKS.md.
"""
from __future__ import annotations

import argparse
import logging
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from franq.evaluation.data import load_examples, load_nq_open  # noqa: E402
from franq.evaluation.observe import cache_key, observe_long, observe_short, run_cached  # noqa: E402

CACHE = ROOT / "benchmarks" / "cache" / "eval"
NQ = ROOT / "datasets" / "nq-open"
EXPERTQA = ROOT / "datasets" / "expertqa"
SIZES = {"long": {"train": 120, "test": 217}, "short": {"train": 120, "test": 300}}


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", name).strip("-")


def long_items(split: str, n: int | None):
    """ExpertQA answers; train is the seeded sample of ``scripts/sample_records.py --seed 0``."""
    rows = load_examples(EXPERTQA / f"{split}.jsonl")
    if split == "train":
        random.Random(0).shuffle(rows)
    return rows[:n] if n is not None else rows


def observe(args) -> None:
    from franq.lm import CausalLM
    from franq.scorers.p_true import PTrue

    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    lm = CausalLM.load(args.model)
    ptrue = PTrue(lm)
    CACHE.mkdir(parents=True, exist_ok=True)
    n = args.limit if args.limit is not None else SIZES[args.setting][args.split]
    if args.setting == "long":
        from franq.faithfulness.factory import backend_from_config
        from franq.config import FranqConfig
        from franq.pipeline import Franq

        franq = Franq(lm, faithfulness=backend_from_config(FranqConfig(), lm), calibrator="none")
        path = CACHE / f"long-expertqa.{slug(lm.name)}.{slug(franq.faithfulness.name)}.jsonl"
        items = [(cache_key(ident, franq.stack), ex) for ident, ex, _ in long_items(args.split, n)]
        for _ in run_cached(str(path), items, lambda ex: observe_long(franq, ptrue, ex)):
            pass
    else:
        from franq.short import SamplingOptions

        options = SamplingOptions(max_new_tokens=args.max_new_tokens)
        path = CACHE / f"short-nq-open.{slug(lm.name)}.jsonl"
        items = [(cache_key(it.id, it.passage_ids, options.__dict__), it)
                 for it in load_nq_open(NQ, args.split, args.variant, limit=n)]
        for _ in run_cached(str(path), items,
                            lambda it: observe_short(lm, ptrue, it.question, it.passages, options=options)):
            pass


def main(argv=None) -> None:
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    ob = sub.add_parser("observe", help="run the model passes into the cache")
    ob.add_argument("setting", choices=["long", "short"])
    ob.add_argument("--split", choices=["train", "test"], required=True)
    ob.add_argument("--variant", choices=["clean", "corrupted"], default="clean")
    ob.add_argument("--limit", type=int, default=None, help="first N items (default: the benchmark size)")
    ob.add_argument("--model", default=None, help="model path or name (default: the embedded model)")
    ob.add_argument("--max-new-tokens", type=int, default=16)
    ob.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch's default)")
    args = ap.parse_args(argv)
    if args.command == "observe":
        observe(args)


if __name__ == "__main__":
    main()
