"""Go on with v9's 490-step plan from its kept step-200 checkpoint to the end (the recipe's
``stop`` lifted), keeping every checkpoint, so the later steps can be read on the dev sets.

    python experiments/2026-11-28-verifier-v9-cpu/continue.py --pairs $V9/pairs-v9.json.xz \
        --keep $V9/keep --out $V9/cont          # $V9/cont/checkpoint.pt = a copy of keep/step-00200.pt
"""
from __future__ import annotations

import argparse
import dataclasses
import logging
import os
from pathlib import Path

from franq.fit.verifier.recipe import V9, fit_recipe

ROOT = Path(__file__).resolve().parents[2]

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=Path, required=True)
    ap.add_argument("--keep", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    card = fit_recipe(dataclasses.replace(V9, stop=None), raw=Path(os.environ["FRANQ_RAW_DATA"]),
                      datasets=ROOT / "datasets", out=args.out, base=ROOT / "franq" / "data" / "verifier",
                      threads=args.threads, pairs_file=args.pairs, checkpoint_every=100, keep=args.keep,
                      log_every=10)
    print(card["training"])
