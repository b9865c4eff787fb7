"""Passage titles in front of the verifier's windows, or not (issue 25): on 400 ExpertQA
rand_test claims of the answers no fit has seen (expertqa_held_out; seed 0; citation
markers stripped; every passage of the answer, the verifier's own windows and
aggregation), how often the verifier calls a claim contradicted
(P_c > 0.5) among supported and among not-supported claims, and how well P_s ranks them.
ExpertQA's titles are URLs; the verifier was trained on windows without titles.

    OMP_NUM_THREADS=1 python experiments/2026-11-24-verifier-passage-titles/bench_verifier_titles.py NAME=DIR [...] [--titles both|on|off] \
        [--out experiments/2026-11-24-verifier-passage-titles/verifier-titles.md]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", help="NAME=DIR")
    ap.add_argument("--titles", choices=("both", "on", "off"), default="both")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "verifier-titles.md"))
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    from franq.evaluation.data import expertqa_held_out
    from franq.evaluation.metrics import auroc, balanced_accuracy
    from franq.fit.verifier_eval import claim_items
    from franq.verifier.model import Verifier

    items, titles, y = claim_items(expertqa_held_out(ROOT / "datasets"), 400)
    rows = ["| verifier | titles | supported: P_c > 0.5 | not supported: P_c > 0.5 | AUROC P_s | BAcc P_s > 0.5 |",
            "|---|---|---|---|---|---|"]
    for spec in args.models:
        name, _, path = spec.partition("=")
        v = Verifier(path)
        for on in {"both": (False, True), "on": (True,), "off": (False,)}[args.titles]:
            out = v.verify(items, titles=titles if on else None)
            s = np.array([o.p_supported for o in out])
            c = np.array([o.p_contradicted for o in out])
            bacc = balanced_accuracy(s, y)
            rows.append(f"| {name} | {'on' if on else 'off'} | {np.mean(c[y == 1] > 0.5):.3f} | "
                        f"{np.mean(c[y == 0] > 0.5):.3f} | {auroc(s, y):.3f} | {bacc:.3f} |")
            print(rows[-1], flush=True)
    text = "\n".join([f"`OMP_NUM_THREADS=1 python experiments/2026-11-24-verifier-passage-titles/bench_verifier_titles.py {' '.join(sys.argv[1:])}`", "",
                      f"{len(y)} ExpertQA rand_test claims ({int(y.sum())} supported, {int((1 - y).sum())} not).",
                      "", *rows, ""])
    Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
