"""Does the embedded model's knowledge term (UQ_unfaith = p(c|x), the claim's tokens without
the passages) carry signal about truth on ExpertQA's long answers, or only the claim's length?
AUROC (true vs false claims) of log p(c|x), of it per token, of fewer tokens alone, of the
claim carrying an [n] citation marker, and of log p(c|x,r) - log p(c|x), on the long
calibrator's ExpertQA train sample and on the held-out rand_test answers (the committed
generations: no model runs).

    OMP_NUM_THREADS=1 python experiments/2026-11-29-knowledge-term-length/run.py
"""
import re
from pathlib import Path

import numpy as np

from franq.evaluation.common import expertqa_held_out
from franq.evaluation.metrics import auroc
from franq.fit.generations import long_scored
from franq.fit.shipped_verifier import LONG_STACK, calibration_sample

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    ds = ROOT / "datasets"
    print("| set | claims | share true | log p(c given x) | per token | fewer tokens | has [n] | log p(c given x, r) - log p(c given x) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, recs in (("ExpertQA train sample (the long calibrator's)", calibration_sample(ds)),
                       ("ExpertQA rand_test held out", expertqa_held_out(ds))):
        rows = []
        for rec, line in zip(recs, long_scored(ds, recs, LONG_STACK)):
            for gold, c in zip(rec["claims"], line.result.claims):
                if c.status == "scored" and gold.get("is_true") is not None:
                    s = c.signals
                    rows.append((s["log_parametric"], s["n_tokens"], bool(re.search(r"\[\d+\]", c.claim.text)),
                                 s["log_claim_prob"], bool(gold["is_true"])))
        a = np.array(rows, dtype=float)
        y = a[:, 4].astype(int)
        cells = [auroc(a[:, 0], y), auroc(a[:, 0] / a[:, 1], y), auroc(-a[:, 1], y), auroc(a[:, 2], y),
                 auroc(a[:, 3] - a[:, 0], y)]
        print(f"| {name} | {len(a)} | {y.mean():.3f} | " + " | ".join(f"{v:.3f}" for v in cells) + " |")


if __name__ == "__main__":
    main()
