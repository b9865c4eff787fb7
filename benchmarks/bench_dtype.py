"""Long-form scoring in float32 vs bfloat16 weights on the embedded model: speed and agreement.

    python benchmarks/bench_dtype.py [--input datasets/expertqa-batch50/answers.jsonl] [--answers 20]
        [--chunks 4] [--device cpu] [--out benchmarks/results/batch-dtype.json]

Both pipelines are loaded once; the answers are cut into ``--chunks`` chunks, each scored
by both in ABBA order (batched ``score_many``, as ``franq score`` does). Reported: seconds
and claims/s per dtype, the median per-chunk ratio, and how far bfloat16's per-claim
values are from float32's (mean / max absolute difference, Spearman correlation). On a
CPU, bfloat16 only pays where the CPU multiplies it natively (AVX512-BF16 or AMX): the
flags found are printed with the table.
"""
from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from franq.config import FranqConfig
from franq.pipeline import Franq
from franq.runners.records import RecordReader

FIELDS = ("p_true_calibrated", "p_true_raw", "uq_faith", "uq_unfaith", "p_faithful")
DTYPES = ("float32", "bfloat16")


def cpu_bf16_flags() -> list[str]:
    try:
        flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags"))
    except (OSError, StopIteration):
        return []
    return sorted({f for f in flags.split() if "bf16" in f or f.startswith("amx")})


def claim_values(results, field: str) -> np.ndarray:
    return np.array([getattr(c, field) for r in results for c in r.claims if c.status == "scored"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", default="datasets/expertqa-batch50/answers.jsonl")
    ap.add_argument("--answers", type=int, default=20)
    ap.add_argument("--chunks", type=int, default=4)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", default="benchmarks/results/batch-dtype.json")
    args = ap.parse_args()
    data = Path(args.input).read_bytes()
    examples = [r.example for r in RecordReader(set()).read(io.BytesIO(data)) if hasattr(r, "example")]
    examples = examples[: args.answers]
    franqs = {d: Franq.from_config(FranqConfig.from_dict({"model": {"device": args.device, "dtype": d}}))
              for d in DTYPES}
    for f in franqs.values():
        f.score_many(examples[:1])  # warm-up
    size = -(-len(examples) // args.chunks)
    chunks = [examples[k:k + size] for k in range(0, len(examples), size)]
    seconds = {d: [] for d in DTYPES}
    results = {d: [] for d in DTYPES}
    for k, chunk in enumerate(chunks):
        for d in DTYPES[:: -1 if k % 2 else 1]:
            t = time.perf_counter()
            results[d].extend(franqs[d].score_many(chunk))
            seconds[d].append(time.perf_counter() - t)
        print(json.dumps({"chunk": k, **{d: round(seconds[d][-1], 2) for d in DTYPES}}), flush=True)
    claims = len(claim_values(results["float32"], "p_true"))
    out = {"command": " ".join(["python", *sys.argv]), "device": args.device, "cpu_bf16_flags": cpu_bf16_flags(),
           "answers": len(examples), "claims": claims,
           "seconds": {d: sum(s) for d, s in seconds.items()},
           "median_ratio_float32_over_bfloat16": statistics.median(a / b for a, b in zip(*seconds.values())),
           "agreement": {}}
    for field in FIELDS:
        a, b = claim_values(results["float32"], field), claim_values(results["bfloat16"], field)
        rho = spearmanr(a, b).correlation if np.ptp(a) > 0 and np.ptp(b) > 0 else float("nan")
        out["agreement"][field] = {"mean_abs_diff": float(np.abs(a - b).mean()),
                                   "max_abs_diff": float(np.abs(a - b).max()), "spearman": float(rho)}
    print(f"\n{out['answers']} answers, {claims} claims, device {args.device}, "
          f"CPU bf16 flags: {', '.join(out['cpu_bf16_flags']) or 'none'}")
    print("| dtype | seconds | claims/s |\n|---|---:|---:|")
    for d in DTYPES:
        print(f"| {d} | {out['seconds'][d]:.1f} | {claims / out['seconds'][d]:.2f} |")
    print(f"\nmedian per-chunk ratio float32/bfloat16: {out['median_ratio_float32_over_bfloat16']:.2f}\n")
    print("| value | mean abs diff | max abs diff | Spearman |\n|---|---:|---:|---:|")
    for field, v in out["agreement"].items():
        print(f"| {field} | {v['mean_abs_diff']:.2e} | {v['max_abs_diff']:.2e} | {v['spearman']:.4f} |")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
