"""Verifier candidates side by side (issue 25): each verifier directory on the committed pair
dev sets (datasets/verifier/dev, and datasets/verifier/stress: hard substitutions; BAcc of
P_supported at 0.5 and AUROC, supported vs not, and the three-way accuracy) and on the obvious
cases of benchmarks/bench_verdicts.py (mean P_contradicted of the contradicted claims, mean
P_supported of the supported ones; then each contradicted claim's P_supported / P_contradicted).

    OMP_NUM_THREADS=1 python experiments/2026-11-24-verifier-candidates-v2-v4/bench_verifier_candidates.py NAME=DIR [NAME=DIR ...] \
        [--out experiments/2026-11-24-verifier-candidates-v2-v4/verifier-candidates.md]

A directory without card.json is read with the shipped verifier's card (same windows and
max_length): a training run stopped before its own evaluation wrote one.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", help="NAME=DIR")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "verifier-candidates.md"))
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    from franq.evaluation.metrics import auroc
    from franq.evaluation.obvious_cases import CASES
    from franq.verifier.model import Verifier, shipped_verifier_dir

    sets = {p.stem: [json.loads(x) for x in open(p, encoding="utf-8")]
            for folder in ("dev", "stress") for p in sorted((ROOT / "datasets" / "verifier" / folder).glob("*.jsonl"))}
    header = ["| model | " + " | ".join(f"{s} BAcc / AUROC / acc3" for s in sets)
              + " | obvious: mean P_c of contradicted / P_s of supported |",
              "|---" * (len(sets) + 2) + "|"]
    rows, per_case = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.models:
            name, _, directory = spec.partition("=")
            d = Path(directory)
            if not (d / "card.json").is_file():
                d = Path(shutil.copytree(d, Path(tmp) / name))
                shutil.copy(shipped_verifier_dir() / "card.json", d / "card.json")
            v = Verifier(d)
            cells = []
            for s, pairs in sets.items():
                p = v.predict([(r["premise"], r["claim"]) for r in pairs])
                y3 = np.array([r["label"] for r in pairs])
                y = (y3 == 0).astype(int)
                hat = (p[:, 0] >= 0.5).astype(int)
                bacc = 0.5 * ((hat[y == 1] == 1).mean() + (hat[y == 0] == 0).mean())
                cells.append(f"{bacc:.3f} / {auroc(p[:, 0], y):.3f} / {(p.argmax(1) == y3).mean():.3f}")
            good = v.verify([([passage], a) for _, passage, a, _ in CASES])
            bad = v.verify([([passage], a) for _, passage, _, a in CASES])
            cells.append(f"{np.mean([b.p_contradicted for b in bad]):.3f} / {np.mean([g.p_supported for g in good]):.3f}")
            per_case[name] = [f"{b.p_supported:.2f} / {b.p_contradicted:.2f}" for b in bad]
            rows.append(f"| {name} | " + " | ".join(cells) + " |")
            print(rows[-1], flush=True)
    cases = ["| obvious contradicted claim | " + " | ".join(f"{m} P_s / P_c" for m in per_case) + " |",
             "|---" * (len(per_case) + 1) + "|"]
    cases += [f"| {c[3]} | " + " | ".join(v[i] for v in per_case.values()) + " |" for i, c in enumerate(CASES)]
    print("\n".join(cases))
    cmd = "OMP_NUM_THREADS=1 python experiments/2026-11-24-verifier-candidates-v2-v4/bench_verifier_candidates.py " + " ".join(args.models)
    Path(args.out).write_text("# Verifier candidates (issue 25)\n\n`" + cmd + "`\n\n" + "\n".join(header + rows) + "\n\n"
                              + "\n".join(cases) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
