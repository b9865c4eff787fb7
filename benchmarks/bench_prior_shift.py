"""A calibrator moved to a new base rate without labels (issue 45 item 4): fitted on one
source, applied to another where claims are true more or less often, ECE before and after
the logit shift (calibration/prior.py), with the deployment prior known (oracle) and
estimated from the unlabelled claims by EM (Saerens, Latinne & Decaestecker 2002). Prints the
table and writes it, with the command, to benchmarks/results/prior-shift.md.

    OMP_NUM_THREADS=1 python benchmarks/bench_prior_shift.py [--verifier DIR]

Fits (franq.fit.natural, the verifier's pass cached): `franq fit calibrator`'s default
three-condition fit (soft variant; and the condition variant) on the ExpertQA train sample
(natural answers, 90% true); the soft fit on the
embedded model's nq-open train answers, clean passage lists only and corrupted only.
Deployments: ExpertQA rand_test as it is, with its contradicted copies, and resampled to 50%
and 30% true (its true claims subsampled, seed 0); nq-open test answers (clean / corrupted
lists); and ExpertQA -> nq-open, a long-form calibrator on the short preset's UQ values (a
stack mismatch franq would refuse: the scorers differ; kept as a stress test of the method).
Then the share from a few labels (`franq fit prior --from-labelled`): whole answers of the
deployment drawn until n claims are labelled, the calibrator moved to their share, ECE on the
claims not drawn.
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


def unmoved_and_told(cal, X, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``cal``'s P(true) of ``X`` unmoved, and moved to the labels' own share (a user who knows
    it: ``--prior``); ``cal`` is left unmoved."""
    cal.prior = None
    before = cal.predict(X)
    cal.prior = float(np.clip(y.mean(), 1e-3, 1 - 1e-3))
    told = cal.predict(X)
    cal.prior = None
    return before, told


def row(name: str, cal, s: dict) -> str:
    from calibration.metrics import expected_calibration_error as ece
    from franq.fit import natural as nat
    from franq.fit.prior import estimate_prior

    X, y = nat.inputs(s), np.asarray(s["is_true"], dtype=float)
    base = cal.base_rate
    before, oracle = unmoved_and_told(cal, X, y)
    est, it = estimate_prior(cal, X)
    cal.prior = est
    em = cal.predict(X)
    cal.prior = None
    return (f"| {name} | {len(y)} | {base:.3f} | {cal.prior_anchor:.3f} | {y.mean():.3f} | {est:.3f} ({it}) | "
            f"{before.mean():.3f} | "
            f"{ece(before, y):.3f} | {ece(oracle, y):.3f} | {ece(em, y):.3f} |")


LABELS = (10, 20, 50, 100, 200)
DRAWS = 200


def labels_row(name: str, cal, s: dict, seed: int = 0) -> str:
    """The calibrator moved to the share of the claims of answers drawn until ``n`` claims are
    labelled (as ``--from-labelled`` reads it: :func:`franq.fit.prior.share_of_labels`), ECE on
    the claims not drawn: median (90th percentile) over draws and the share of draws at or below
    .05, per n."""
    from types import SimpleNamespace

    from bench_calibration_labels import draw

    from calibration.metrics import expected_calibration_error as ece
    from franq.fit import natural as nat
    from franq.fit.prior import share_of_labels

    X, y = nat.inputs(s), np.asarray(s["is_true"], dtype=float)
    raw, told = unmoved_and_told(cal, X, y)
    oracle = ece(told, y)
    rng = np.random.default_rng(seed)
    answers = SimpleNamespace(groups=np.unique(np.asarray(s["answer"]), return_inverse=True)[1])
    cells = []
    for n in LABELS:
        eces = []
        for _ in range(DRAWS):  # whole answers, as people label them, until n claims are labelled
            drawn = draw(answers, n, rng)
            cal.prior = share_of_labels(y[drawn])["share"]
            eces.append(ece(cal.predict(X)[~drawn], y[~drawn]))
        e = np.array(eces)
        cells.append(f"{np.median(e):.3f} ({np.quantile(e, 0.9):.3f}) {np.mean(e <= 0.05):.0%}")
    cal.prior = None
    return f"| {name} | {len(y)} | {y.mean():.3f} | {ece(raw, y):.3f} | {oracle:.3f} | " + " | ".join(cells) + " |"


def main() -> int:
    from franq.fit import natural as nat
    from franq.fit.calibrator import fit_three_condition_calibrator
    from franq.fit.prior import EM_BOUND_NOTE

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--verifier", default=None)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "prior-shift.md"))
    ap.add_argument("--cached-only", action="store_true", help="Measure only the sets the cache holds.")
    args = ap.parse_args()
    t0 = time.perf_counter()
    sets = nat.natural_sets(ROOT / "datasets", args.verifier, echo=lambda m: print(m, file=sys.stderr),
                            compute=not args.cached_only)

    def fitted(s, variant="condition"):
        return fit_three_condition_calibrator(nat.training_claims_of(s), variant=variant, min_per_condition=0)[0]

    def soft(s):
        return fitted(s, "soft")

    eqa = fitted(sets["expertqa-train"])  # the condition variant
    eqa_soft = fitted(sets["expertqa-train"], "soft")  # the command's default
    test = sets["expertqa-test"]
    contra = sets.get("expertqa-test-contra")
    both = nat.join(test, contra) if contra is not None else test
    nq_train, nq_test = sets.get("nq-train"), sets["nq-test"]

    def variant(s, v):
        return nat.subset(s, [x == v for x in s["variant"]])

    lines = [f"# Prior shift (issue 45 item 4); verifier {sets['verifier']}", "",
             "Command: `OMP_NUM_THREADS=1 python benchmarks/bench_prior_shift.py`. ECE (10 bins) of the calibrated "
             "P(true) unadjusted, moved to the deployment's true share (oracle), and moved to the EM estimate from "
             "the deployment's unlabelled claims (iterations in brackets). P(true), the mix, is moved by "
             "log(P'/(1-P')) - log(P/(1-P)), P the calibrator's mean P(true) on its fit claims (calibration/prior.py; "
             "before 2026-11-29 each map moved before mixing, from the fit's share true: "
             "experiments/2026-11-29-prior-on-output).", "",
             "| fitted on -> deployed on | claims | fitted share true | its mean P(true) on them | deployment share "
             "true | EM estimate | mean P(true) unadjusted | ECE unadjusted | ECE oracle prior | ECE EM prior |",
             "|---|---|---|---|---|---|---|---|---|---|",
             row("ExpertQA train, condition variant -> ExpertQA rand_test (natural)", eqa, test),
             row("ExpertQA train, soft variant -> ExpertQA rand_test (natural)", eqa_soft, test)]
    copies = "rand_test + contradicted copies" if contra is not None else "rand_test (copies not in this run)"
    if contra is not None:
        lines.append(row(f"ExpertQA train, condition variant -> {copies}", eqa, both))
        lines.append(row(f"ExpertQA train, soft variant -> {copies}", eqa_soft, both))
    for share in (0.5, 0.3):
        lines += [row(f"ExpertQA train, condition variant -> {copies}, resampled to {share:.0%} true", eqa, resample_to(both, share)),
                  row(f"ExpertQA train, soft variant -> {copies}, resampled to {share:.0%} true", eqa_soft,
                      resample_to(both, share))]
    if args.verifier is None:  # the shipped long file (the default stack's) on the natural set
        from franq.calibrate import load_calibrator
        from franq.fit.shipped import data_dir
        from franq.fit.shipped_verifier import LONG_NAME

        shipped = load_calibrator(data_dir() / LONG_NAME)
        lines.append(row("shipped long calibrator (17% contradicted copies) -> ExpertQA rand_test (natural)", shipped, test))
        if contra is not None:
            lines.append(row(f"shipped long calibrator -> {copies}", shipped, both))
    if nq_train is not None:
        clean, corrupted = soft(variant(nq_train, "clean")), soft(variant(nq_train, "corrupted"))
        lines += [row("nq-open train, clean lists -> nq-open test, corrupted lists", clean, variant(nq_test, "corrupted")),
                  row("nq-open train, corrupted lists -> nq-open test, clean lists", corrupted, variant(nq_test, "clean"))]
    lines += [row("ExpertQA train, soft -> nq-open test, all (stack mismatch: stress test)", eqa_soft, nq_test), "",
              EM_BOUND_NOTE, "", "## The share from a few labels", "",
              ("`franq fit prior CAL --from-labelled LABELLED.jsonl`: answers of the deployment drawn at random and "
               "labelled whole until n claims are, the calibrator moved to their share ((true + 1/2) / (n + 1), "
               f"franq.fit.prior.share_of_labels), ECE on the claims not drawn: median (90th percentile) and the share of {DRAWS} draws at or below .05."),
              "", "| fitted on -> deployed on | claims | share true | ECE unadjusted | ECE oracle prior | "
              + " | ".join(f"n = {n}" for n in LABELS) + " |", "|---|---|---|---|---|" + "---|" * len(LABELS)]
    if args.verifier is None:
        lines.append(labels_row("shipped long calibrator -> ExpertQA rand_test (natural)", shipped, test))
        if contra is not None:
            lines.append(labels_row(f"shipped long calibrator -> {copies}", shipped, both))
    lines += [labels_row("ExpertQA train, soft variant -> ExpertQA rand_test (natural)", eqa_soft, test),
              labels_row(f"ExpertQA train, soft variant -> {copies}, resampled to 30% true", eqa_soft,
                         resample_to(both, 0.3))]
    if nq_train is not None:
        lines += [labels_row("nq-open train, clean lists -> nq-open test, corrupted lists", clean,
                             variant(nq_test, "corrupted")),
                  labels_row("nq-open train, corrupted lists -> nq-open test, clean lists", corrupted,
                             variant(nq_test, "clean"))]
    lines += ["",
              f"({time.perf_counter() - t0:.0f} s)"]
    text = "\n".join(lines)
    print(text)
    Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
