"""A given claim verified whole, or as its atomic sub-claims (issue 25): WiCE and ExpertQA
claims are written by people and often hold several facts, partly supported or with one of
them contradicted. Each claim is split by franq's atomic decomposer (claims.atomic, a spaCy
parse; a one-fact claim stays whole) and each sub-claim read by the verifier against all the
claim's passages. Rules: ``whole`` (the claim as given, today's behaviour); ``weakest``
(the three probabilities of the sub-claim with the lowest P_supported); ``weakest, P_c
max`` (its P_supported, the highest P_contradicted of any sub-claim); ``whole unless a
sub-claim P_c > t`` (the whole claim's call, replaced by the triple of its most contradicted
sub-claim when that sub-claim's P_contradicted is above t and above the whole claim's).

Sets (franq.fit.verifier_eval.long_evidence_sets): WiCE held out (144 claims), 400 ExpertQA
rand_test claims of the answers no fit has seen (seed 0, citation markers stripped) and the
199 of those answers' claims with one typed substitution (franq.fit.shipped_contradictions,
all contradicted). Franq's own long-form path already decomposes an answer into atomic
claims; this is about claims a user or a dataset gives.

    OMP_NUM_THREADS=1 python experiments/2026-11-24-verifier-subclaims/bench_verifier_subclaims.py [--verifier DIR] \
        [--out experiments/2026-11-24-verifier-subclaims/verifier-subclaims.md]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CONFIDENT = (0.7, 0.8)  # "whole unless": a sub-claim contradicted above this replaces the whole claim's call


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--verifier", default=None, help="verifier directory (default: the shipped one)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "verifier-subclaims.md"))
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    from claims.atomic import AtomicDecomposer
    from franq.fit.verifier_eval import long_evidence_sets
    from franq.evaluation.metrics import auroc, balanced_accuracy
    from franq.verifier.model import Verifier, shipped_verifier_dir

    v = Verifier(args.verifier or shipped_verifier_dir())
    decomposer = AtomicDecomposer()
    lines = ["| set | claims | sub-claims per claim | rule | BAcc P_s > 0.5 | AUROC P_s | supported: P_c > 0.5 "
             "| not supported: P_c > 0.5 | P_c the largest | verifier s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for name, (items, y) in long_evidence_sets(ROOT / "datasets").items():
        subs = [[c.text for c in d.claims if c.text.strip()] or [claim] for d, claim in
                zip(decomposer.decompose_many([claim for _, claim in items]), [claim for _, claim in items])]
        t0 = time.time()
        whole = np.array([[o.p_supported, o.p_contradicted, o.p_not_mentioned] for o in v.verify(items)])
        t_whole = time.time() - t0
        flat = v.verify([(items[i][0], s) for i, ss in enumerate(subs) for s in ss])
        t_sub = time.time() - t0 - t_whole
        per, k = [], 0
        for ss in subs:
            per.append(np.array([[o.p_supported, o.p_contradicted, o.p_not_mentioned] for o in flat[k:k + len(ss)]]))
            k += len(ss)
        weakest = np.array([p[p[:, 0].argmin()] for p in per])
        pc_max = weakest.copy()
        pc_max[:, 1] = [p[:, 1].max() for p in per]
        pc_max[:, 2] = np.clip(1 - pc_max[:, 0] - pc_max[:, 1], 0, 1)
        rules = [("whole", whole, t_whole), ("weakest", weakest, t_sub), ("weakest, P_c max", pc_max, t_sub)]
        for th in CONFIDENT:
            m = whole.copy()
            for i, p in enumerate(per):
                j = int(p[:, 1].argmax())
                if p[j, 1] > th and p[j, 1] > whole[i, 1]:
                    m[i] = p[j]
            rules.append((f"whole unless a sub-claim P_c > {th}", m, t_sub))
        for rule, m, secs in rules:
            s, c = m[:, 0], m[:, 1]
            both = 0 < y.sum() < len(y)
            bacc = f"{balanced_accuracy(s, y):.3f}" if both else "n/a"
            sup = f"{np.mean(c[y == 1] > 0.5):.3f}" if y.sum() else "n/a"
            lines.append(f"| {name} | {len(y)} | {np.mean([len(x) for x in subs]):.2f} | {rule} | {bacc} | "
                         f"{f'{auroc(s, y):.3f}' if both else 'n/a'} | {sup} | {np.mean(c[y == 0] > 0.5):.3f} | "
                         f"{int(np.sum(m.argmax(1) == 1))} | {secs:.0f} |")
            print(lines[-1], flush=True)
    cmd = "OMP_NUM_THREADS=1 python experiments/2026-11-24-verifier-subclaims/bench_verifier_subclaims.py" + (f" --verifier {args.verifier}" if args.verifier else "")
    Path(args.out).write_text(f"# Given claims verified whole or as atomic sub-claims (issue 25)\n\n`{cmd}`\n\n"
                              f"verifier: {v.card.get('name')}; one torch thread\n\n" + "\n".join(lines) + "\n",
                              encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
