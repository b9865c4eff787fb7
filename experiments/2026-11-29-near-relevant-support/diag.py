"""Supported claims of the two user-style sets: the verifier's argmax under `relevant`, and
whether its deciding window or any window reads them as supported (README.md's first table).

    OMP_NUM_THREADS=1 python experiments/2026-11-29-near-relevant-support/diag.py [V8_STEP500_DIR]
"""
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_verifier_heldout import userdev_items

from franq.verifier import Verifier, shipped_verifier_dir
from franq.verifier.aggregate import relevant

if __name__ == "__main__":
    torch.set_num_threads(1)
    for name in ("userdev", "userdev2"):
        items, labels, _ = userdev_items(ROOT / "datasets" / name / "answers.jsonl")
        sup = [items[i] for i, lab in enumerate(labels) if lab == "supported"]
        for d in (shipped_verifier_dir(), *sys.argv[1:]):
            v = Verifier(d)
            got = [w for _, w in v.window_probabilities(sup)]
            am = np.array([int(np.argmax(relevant(w)[0])) for w in got])
            rel = np.mean([relevant(w)[0][0] >= 0.5 for w in got])
            anys = np.mean([w[:, 0].max() >= 0.5 for w in got])
            print(f"{name} {v.name} n={len(sup)} windows/claim {np.mean([len(w) for w in got]):.1f} relevant argmax "
                  f"S/C/N {np.mean(am == 0):.2f}/{np.mean(am == 1):.2f}/{np.mean(am == 2):.2f} relevant P_s>=.5 "
                  f"{rel:.2f} any window P_s>=.5 {anys:.2f}", flush=True)
