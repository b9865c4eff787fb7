"""The short-form three-condition calibrator two ways (issue 25): the shipped soft fit (each
answer's weight in a map is the verifier's probability of that condition) against a
condition fit on gold conditions (clean list + right answer: supported; clean list + wrong
answer: contradicted, the gold passage is there and says otherwise; corrupted list: not
mentioned). Both fitted on the same attempted greedy answers of 300 nq-open train questions
(datasets/generations, the shipped verifier, no causal-LM pass), both measured on the first
200 test questions.

    OMP_NUM_THREADS=1 python experiments/2026-11-24-short-condition-fit/bench_short_condition_fit.py [--verifier DIR] \
        [--out experiments/2026-11-24-short-condition-fit/short-condition-fit.md]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--verifier", default=None, help="verifier directory (default: the shipped one)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "short-condition-fit.md"))
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    from calibration.contract import ClaimInputs
    from calibration.three_condition import ThreeConditionCalibrator
    from franq.fit.shipped_verifier import SHORT_TRAIN, short_verifier_results, verifier_backend
    from franq.fit.verifier_eval import floors_text, short_table

    datasets, backend = ROOT / "datasets", verifier_backend(args.verifier)
    _, train = short_verifier_results(datasets, backend, SHORT_TRAIN, split="train")
    _, test = short_verifier_results(datasets, backend, 200, split="test")
    claims = [(v, s.claims[0], y) for v, s, y in train if s.claims and s.claims[0].status == "scored"]
    signals = ClaimInputs(*([getattr(c, k) for _, c, _ in claims] for k in ("p_faithful", "uq_faith", "uq_unfaith")),
                          p_contradicted=[c.p_contradicted for _, c, _ in claims],
                          p_not_mentioned=[c.p_not_mentioned for _, c, _ in claims])
    labels = [y for *_, y in claims]
    gold = ["not_mentioned" if v == "corrupted" else "supported" if y else "contradicted" for v, _, y in claims]
    fits = {"soft (shipped)": ThreeConditionCalibrator(variant="soft").fit(signals, labels),
            "condition, gold conditions": ThreeConditionCalibrator(variant="condition").fit(
                signals, labels, condition=gold)}
    counts = {k: gold.count(k) for k in ("supported", "contradicted", "not_mentioned")}
    out = ["# Short-form three-condition calibrator: soft fit vs gold-condition fit (issue 25)", "",
           f"`OMP_NUM_THREADS=1 python experiments/2026-11-24-short-condition-fit/bench_short_condition_fit.py"
           f"{' --verifier ' + args.verifier if args.verifier else ''}`", "",
           f"Fitted on {len(claims)} attempted greedy answers of {SHORT_TRAIN} nq-open train questions "
           f"(gold conditions: {counts}); measured on the first 200 test questions.", ""]
    for name, cal in fits.items():
        out += [f"## {name}", "", *short_table(cal, test), "", f"Map floors: {floors_text(cal)}.", ""]
    text = "\n".join(out)
    print(text)
    Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
