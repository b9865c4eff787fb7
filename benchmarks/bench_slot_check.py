"""The verifier with and without the slot check (franq.verifier.slots) on the long-evidence
sets the verifier is reported on: WiCE held out (144 claims, whole Wikipedia pages), 400
ExpertQA rand_test claims of answers no fit has seen, and the claims of those answers with
one fact contradicted by a typed substitution (all false); citation markers stripped,
windows read without titles, as franq reads them (franq.fit.verifier.eval.long_evidence_sets).

    OMP_NUM_THREADS=1 python benchmarks/bench_slot_check.py [--verifier DIR] [--combiner FILE]
        [--out benchmarks/results/slot-check.md]

The verifier runs once per set; the combiner (default: slot-combiner.json in the verifier
directory, fitted by scripts/fit_slot_combiner.py on other data) is applied to the same
claim probabilities. Per set, without -> with: balanced accuracy of P_supported at 0.5,
AUROC of P_supported and of P_s - P_c, the share of supported claims with P_c > 0.5, and the
share of unsupported claims whose argmax is "contradicted".
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def metrics(p3: np.ndarray, y: np.ndarray) -> list[str]:
    from franq.evaluation.metrics import auroc, balanced_accuracy

    s, c = p3[:, 0], p3[:, 1]
    both = 0 < y.sum() < len(y)
    return [f"{balanced_accuracy(s, y):.3f}" if both else f"{np.mean(s < 0.5):.3f}*",
            f"{auroc(s, y):.3f}" if both else "-", f"{auroc(s - c, y):.3f}" if both else "-",
            f"{np.mean(c[y == 1] > 0.5):.2f}" if y.any() else "-",
            f"{np.mean(p3[y == 0].argmax(1) == 1):.2f}" if (y == 0).any() else "-"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--verifier", default=None, help="A franq verifier directory (default: the shipped one).")
    ap.add_argument("--combiner", default=None, help="The combiner file (default: the verifier directory's).")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "slot-check.md"))
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    from franq.fit.verifier.eval import long_evidence_sets
    from franq.verifier import Verifier, shipped_verifier_dir
    from franq.verifier.combiner import load_combiner, recheck

    v = Verifier(args.verifier or shipped_verifier_dir())
    comb = load_combiner(v, args.combiner)
    rows = [("| set | claims | BAcc P_s@0.5 | AUROC P_s | AUROC P_s - P_c | supported: P_c > 0.5 "
            "| unsupported: argmax C |"), "|---|---:|---|---|---|---|---|"]
    timing = []
    for name, (items, y) in long_evidence_sets(ROOT / "datasets").items():
        t0 = time.perf_counter()
        verdicts = v.verify(items)
        t1 = time.perf_counter()
        p3 = np.array([[d.p_supported, d.p_contradicted, d.p_not_mentioned] for d in verdicts])
        fused = recheck(comb, p3, [(list(p), c) for p, c in items])
        t2 = time.perf_counter()
        timing.append(f"{name}: verifier {1000 * (t1 - t0) / len(y):.0f} ms, slot check {1000 * (t2 - t1) / len(y):.0f}"
                      " ms per claim")
        y = np.asarray(y)
        rows.append(f"| {name} | {len(y)} | " + " | ".join(f"{a} -> {b}" for a, b in zip(metrics(p3, y), metrics(fused, y)))
                    + " |")
        print(rows[-1], flush=True)
    cmd = "OMP_NUM_THREADS=1 python benchmarks/bench_slot_check.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = (f"# The verifier without -> with the slot check\n\n`{cmd.strip()}`\n\n{v.name} ({v.aggregation}, windows "
            f"of {v.window_words} words); combiner fitted for it on {', '.join(comb.meta.get('fitted_on', {}))} "
            f"(never on these sets). 1 torch thread. y = 1: the claim is supported (WiCE: supported; ExpertQA: "
            f"the annotators' support label). * all claims false: the share with P_s < 0.5 instead of BAcc. "
            + "; ".join(timing) + ".\n\n" + "\n".join(rows) + "\n")
    print(text)
    Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
