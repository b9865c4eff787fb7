"""How the verifier's windows combine per claim: every aggregation rule
(franq.verifier.aggregate) on one pass of a verifier over long evidence pages.

    python scripts/bench_verifier_aggregation.py --model DIR [--data datasets/wice/heldout.jsonl]
        [--window-words N] [--limit N] [--out benchmarks/results/verifier-aggregation.md]

The data is franq-format JSONL with one labelled claim per record (``claims[0].is_faithful``;
WiCE: supported vs partially / not supported, scripts/build_wice.py). The verifier runs
once over every (window, claim) pair; each rule is then applied to the same window
probabilities. Per rule: balanced accuracy of P_supported at 0.5, AUROC of P_supported,
AUROC of P_supported - P_contradicted, mean P_contradicted of unsupported and supported
claims. Writes the table and the command that made it.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from franq.evaluation.metrics import auroc
from franq.verifier import Verifier, aggregate

RULE_SETTINGS = [("max_support", 0.3), ("max_support", 0.5), ("max_support", 0.7), ("relevant", 0.5),
                 ("decisive", 0.5), ("max", 0.5)]


def balanced_accuracy(p: np.ndarray, y: np.ndarray, threshold: float = 0.5) -> float:
    pred = p >= threshold
    return 0.5 * (float(np.mean(pred[y == 1])) + float(np.mean(~pred[y == 0])))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="A franq verifier directory.")
    ap.add_argument("--data", default="datasets/wice/heldout.jsonl")
    ap.add_argument("--window-words", type=int, default=None)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default=None)
    ap.add_argument("--out", default="benchmarks/results/verifier-aggregation.md")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    records = [json.loads(line) for line in open(args.data, encoding="utf-8") if line.strip()][: args.limit]
    v = Verifier(args.model, window_words=args.window_words, device=args.device)
    items = [([p["text"] for p in r["passages"]], r["claims"][0]["text"]) for r in records]
    titles = [[p.get("title", "") for p in r["passages"]] for r in records]
    y = np.array([int(bool(r["claims"][0]["is_faithful"])) for r in records])
    t0 = time.perf_counter()
    per_claim = v.window_probabilities(items, titles=titles)
    seconds = time.perf_counter() - t0
    n_windows = sum(len(ws) for ws, _ in per_claim)
    rows = ["| rule | relevance | BAcc@0.5 | AUROC P_s | AUROC P_s - P_c | mean P_c (unsupported) | "
            "mean P_c (supported) |", "|---|---|---|---|---|---|---|"]
    for rule, relevance in RULE_SETTINGS:
        p = np.array([aggregate(probs, rule, relevance=relevance)[0] for _, probs in per_claim])
        rows.append(f"| {rule} | {relevance:g} | {100 * balanced_accuracy(p[:, 0], y):.1f} | "
                    f"{auroc(p[:, 0], y):.3f} | {auroc(p[:, 0] - p[:, 1], y):.3f} | {p[y == 0, 1].mean():.3f} | "
                    f"{p[y == 1, 1].mean():.3f} |")
    head = (f"# Verifier aggregation rules\n\n`python {' '.join(sys.argv)}`\n\nmodel: {v.name} ({args.model}); "
            f"data: {args.data}: {len(records)} claims ({int(y.sum())} supported); windows of {v.window_words} "
            f"words, {v.overlap_sentences} sentence(s) overlap, max_length {v.max_length}: {n_windows} windows, "
            f"{seconds:.1f} s on {v.device} ({1000 * seconds / max(len(records), 1):.0f} ms per claim, "
            f"{args.threads} thread(s))\n\n")
    text = head + "\n".join(rows) + "\n"
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
