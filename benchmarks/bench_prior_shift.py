"""A calibrator moved to a new base rate without labels (issue 45 item 4): fitted on one
source, applied to another where claims are true more or less often, ECE before and after
the logit shift (calibration/prior.py), with the deployment prior known (oracle) and
estimated from the unlabelled claims by EM (Saerens, Latinne & Decaestecker 2002). Prints the
table and writes it, with the command, to benchmarks/results/prior-shift.md.

    OMP_NUM_THREADS=1 python benchmarks/bench_prior_shift.py [--verifier DIR]

Fits (franq.fit.natural, the verifier's pass cached): `franq fit calibrator`'s default
three-condition fit on the ExpertQA train sample (natural answers, 93% true); the same on the
embedded model's nq-open train answers, clean passage lists only and corrupted only.
Deployments: ExpertQA rand_test as it is, with its contradicted copies, and resampled to 50%
and 30% true (its true claims subsampled, seed 0); nq-open test answers (clean / corrupted
lists); and ExpertQA -> nq-open, a long-form calibrator on the short preset's UQ values (a
stack mismatch franq would refuse: the scorers differ; kept as a stress test of the method).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def resample_to(s: dict, share: float, seed: int = 0) -> dict:
    """``s`` with its true claims subsampled so that ``share`` of the claims are true."""
    from franq.fit import natural as nat

    y = np.asarray(s["is_true"]) > 0.5
    n_false = int((~y).sum())
    n_true = min(int(y.sum()), int(round(share / (1 - share) * n_false)))
    keep = np.zeros(len(y), dtype=bool)
    keep[~y] = True
    keep[np.random.default_rng(seed).choice(np.flatnonzero(y), n_true, replace=False)] = True
    return nat.subset(s, keep)


def row(name: str, cal, s: dict) -> str:
    from calibration.metrics import expected_calibration_error as ece
    from franq.fit import natural as nat
    from franq.fit.prior import estimate_prior

    X, y = nat.inputs(s), np.asarray(s["is_true"], dtype=float)
    base = cal.base_rate
    cal.prior = None
    before = cal.predict(X)
    cal.prior = float(np.clip(y.mean(), 1e-3, 1 - 1e-3))
    oracle = cal.predict(X)
    cal.prior = None
    est, it = estimate_prior(cal, X)
    cal.prior = est
    em = cal.predict(X)
    cal.prior = None
    return (f"| {name} | {len(y)} | {base:.3f} | {y.mean():.3f} | {est:.3f} ({it}) | {before.mean():.3f} | "
            f"{ece(before, y):.3f} | {ece(oracle, y):.3f} | {ece(em, y):.3f} |")


def main() -> int:
    from franq.fit import natural as nat
    from franq.fit.calibrator import fit_three_condition_calibrator

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--verifier", default=None)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "prior-shift.md"))
    args = ap.parse_args()
    t0 = time.perf_counter()
    sets = nat.natural_sets(ROOT / "datasets", args.verifier, echo=lambda m: print(m, file=sys.stderr))

    def fitted(s):
        return fit_three_condition_calibrator(nat.training_claims_of(s), min_per_condition=0)[0]

    eqa = fitted(sets["expertqa-train"])
    test, contra = sets["expertqa-test"], sets["expertqa-test-contra"]
    both = nat.join(test, contra)
    nq_train, nq_test = sets["nq-train"], sets["nq-test"]

    def variant(s, v):
        return nat.subset(s, [x == v for x in s["variant"]])

    clean, corrupted = fitted(variant(nq_train, "clean")), fitted(variant(nq_train, "corrupted"))
    lines = [f"# Prior shift (issue 45 item 4); verifier {sets['verifier']}", "",
             "Command: `OMP_NUM_THREADS=1 python benchmarks/bench_prior_shift.py`. ECE (10 bins) of the calibrated "
             "P(true) unadjusted, moved to the deployment's true share (oracle), and moved to the EM estimate from "
             "the deployment's unlabelled claims (iterations in brackets). Each map's output is moved by "
             "log(P'/(1-P')) - log(P/(1-P)) before mixing.", "",
             "| fitted on -> deployed on | claims | fitted share true | deployment share true | EM estimate | "
             "mean P(true) unadjusted | ECE unadjusted | ECE oracle prior | ECE EM prior |",
             "|---|---|---|---|---|---|---|---|---|",
             row("ExpertQA train -> ExpertQA rand_test (natural)", eqa, test),
             row("ExpertQA train -> rand_test + contradicted copies", eqa, both),
             row("ExpertQA train -> rand_test + copies, resampled to 50% true", eqa, resample_to(both, 0.5)),
             row("ExpertQA train -> rand_test + copies, resampled to 30% true", eqa, resample_to(both, 0.3)),
             row("nq-open train, clean lists -> nq-open test, corrupted lists", clean, variant(nq_test, "corrupted")),
             row("nq-open train, corrupted lists -> nq-open test, clean lists", corrupted, variant(nq_test, "clean")),
             row("ExpertQA train -> nq-open test, all (stack mismatch: stress test)", eqa, nq_test), "",
             f"({time.perf_counter() - t0:.0f} s)"]
    text = "\n".join(lines)
    print(text)
    Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
