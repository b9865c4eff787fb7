"""Draw a seeded sample of JSONL records (reproduces the calibration training sample).

    python scripts/sample_records.py datasets/expertqa/train.jsonl \
        benchmarks/cache/expertqa-train-sample120.jsonl --n 120 --seed 0

The lines are shuffled with ``random.Random(seed)`` and the first ``n`` are kept.
"""
from __future__ import annotations

import argparse
import random


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source")
    ap.add_argument("target")
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with open(args.source, encoding="utf-8") as f:
        rows = f.read().splitlines()
    random.Random(args.seed).shuffle(rows)
    with open(args.target, "w", encoding="utf-8") as f:
        f.write("\n".join(rows[: args.n]) + "\n")
    print(f"wrote {min(args.n, len(rows))} of {len(rows)} records to {args.target}")


if __name__ == "__main__":
    main()
