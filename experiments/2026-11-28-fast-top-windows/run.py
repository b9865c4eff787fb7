"""Question: how many windows per claim should the fast preset's verifier read? The
cross-encoder's cost is its pairs (claim x window); reading only the k windows that share
the most content words with the claim (franq.verifier.windows.closest_windows) cuts it.
Measured on ExpertQA TRAIN (the first 40 answers of the seeded calibration sample; never a
dev or test set): AUROC of P_supported against the truth and the support labels, and the
pairs read, for k = 1, 2, 3, 4 and every window (the verifier's windows read once; each k
takes its subset, aggregated by the card's rule).

    OMP_NUM_THREADS=1 PYTHONPATH=. python experiments/2026-11-28-fast-top-windows/run.py
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from franq.evaluation.common import auroc
from franq.fit.generations import seeded_sample
from franq.verifier.aggregate import aggregate
from franq.verifier.model import Verifier
from franq.verifier.windows import closest_windows

ROOT = Path(__file__).resolve().parents[2]

KS = (1, 2, 3, 4, None)


def main(n: int = 40) -> str:
    recs = seeded_sample(ROOT / "datasets" / "expertqa" / "train.jsonl", n, seed=0)
    v = Verifier()
    items, labels = [], []
    for rec in recs:
        passages = [p["text"] if isinstance(p, dict) else p for p in rec["passages"]]
        for c in rec["claims"]:
            items.append((passages, c["text"]))
            labels.append((c.get("is_true"), c.get("is_faithful")))
    rows = ["| windows read per claim | pairs | share of all pairs | AUROC P_s vs truth | AUROC P_s vs support |",
            "|---|---|---|---|---|"]
    got = v.window_probabilities(items)
    total = sum(len(ws) for ws, _ in got)
    for k in KS:
        ps, pairs = [], 0
        for (ws, probs), (_, claim) in zip(got, items):
            keep = list(range(len(ws))) if k is None else [ws.index(w) for w in closest_windows(ws, claim.strip(), k)]
            pairs += len(keep)
            p3, _ = aggregate(probs[keep], v.aggregation, relevance=v.relevance)
            ps.append(p3[0])
        ps = np.array(ps)
        out = []
        for j in (0, 1):
            mask = np.array([lab[j] is not None for lab in labels])
            y = np.array([float(lab[j]) for lab in labels if lab[j] is not None])
            out.append(auroc(ps[mask], y))
        rows.append(f"| {'all' if k is None else k} | {pairs} | {pairs / total:.2f} | {out[0]:.3f} | {out[1]:.3f} |")
    head = (f"{len(recs)} ExpertQA train answers, {len(items)} claims "
            f"({sum(lab[0] is not None for lab in labels)} with a truth label, "
            f"{sum(lab[1] is not None for lab in labels)} with a support label); verifier {v.name}, "
            f"rule {v.aggregation}, windows of {v.window_words} words\n\n")
    return head + "\n".join(rows)


if __name__ == "__main__":
    print(main())
