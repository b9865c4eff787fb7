"""Cost of the verifier backend beside today's default (combined-v1): `franq score` long form
on the same answers, one torch thread, the two stacks interleaved answer by answer in one
process (the model loads once), calibrators applied as each stack ships them.

    PYTHONPATH=. python benchmarks/bench_verifier_cost.py --n 20 --out benchmarks/results/verifier-cost.md
"""
from __future__ import annotations

import argparse
import datetime
import json
import platform
import resource
import sys
import time

import numpy as np
import torch

import franq


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="datasets/expertqa-batch50/answers.jsonl")
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--out", default="benchmarks/results/verifier-cost.md")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    records = [json.loads(x) for x in open(args.data, encoding="utf-8") if x.strip()][: args.n]
    examples = [franq.Example.from_dict({k: r[k] for k in ("question", "passages", "answer") if k in r})
                for r in records]
    base = franq.Franq.from_config(franq.FranqConfig.from_dict({"faithfulness": {"name": "combined"}}))
    stacks = {"combined": base,
              "verifier": franq.Franq(franq.FranqConfig.from_dict({"faithfulness": {"name": "verifier"}}), base.lm)}
    for fr in stacks.values():  # warm up: load the verifier, first-call costs
        fr.score_many(examples[:1])
    seconds = {k: [] for k in stacks}
    claims = 0
    for ex in examples:
        for name, fr in stacks.items():
            t = time.perf_counter()
            out = fr.score_many([ex])
            seconds[name].append(time.perf_counter() - t)
        claims += len(out[0].claims)
    ratio = np.array(seconds["verifier"]) / np.array(seconds["combined"])
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines = ["# Verifier cost beside combined-v1 (issue 25)", "",
             f"Run {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC.",
             f"Command: `{' '.join(['python', *sys.argv])}`", "",
             "Stacks as configured by default: " + ", ".join(
                 f"{name} = `{getattr(fr.faithfulness, 'name', name)}`" for name, fr in stacks.items()) + ".", "",
             f"{len(examples)} ExpertQA answers ({claims} claims) from {args.data}, long form, embedded model, one torch "
             f"thread, interleaved answer by answer on {platform.node()} (a shared 2-core machine); peak RSS of the "
             f"process with both stacks loaded: {rss:.0f} MB.", "",
             "| stack | total s | s per answer (median) |", "|---|---|---|"]
    for name, s in seconds.items():
        lines.append(f"| {name} | {sum(s):.1f} | {np.median(s):.2f} |")
    lines += ["", f"Ratio verifier / combined: total {sum(seconds['verifier']) / sum(seconds['combined']):.2f}x, "
              f"median per answer {np.median(ratio):.2f}x (target: <= 2x).", ""]
    text = "\n".join(lines)
    print(text)
    open(args.out, "w", encoding="utf-8").write(text)


if __name__ == "__main__":
    main()
