"""The shipped three-condition calibrators on natural dev sets, and the two fixes issue 45
names for the long one: calibrate the three conditions before mixing, or fit the final map
on the mix, each fitted with synthetic corruptions at 0% and at 17% of the claims. Prints
the tables and writes them, with the command, to benchmarks/results/calibration-natural.md.

    OMP_NUM_THREADS=1 python benchmarks/bench_calibration_natural.py [--verifier DIR] [--out FILE]

Sets (franq.fit.natural): ExpertQA rand_test answers no fit has seen (natural, GPT-4 / Bing
answers), the same with their contradicted copies, the embedded model's nq-open test answers
(clean and corrupted passage lists). WiCE held out has no committed generations (UQ values),
so it is not measured. The verifier's pass over every set (about 40 minutes on one CPU
thread) is cached in benchmarks/cache/natural-<verifier>.json; later runs take seconds.
Rerun with the v8 verifier: --verifier PATH (its own cache).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LONG = "calibrator-long-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json"
SHORT = "calibrator-short-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json"


def _fmt(m: dict) -> str:
    ci = m.get("ece_ci")
    ece = f"{m['ece']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
    return f"{ece} | {m['brier']:.3f} | {m['constant_brier']:.3f} | {m['auroc']:.3f}"


def long_fits(sets: dict) -> dict:
    """name -> predict(set) of every long-form candidate, fitted on the ExpertQA train sample."""
    from calibration.three_condition import ThreeConditionCalibrator
    from franq.fit import natural as nat

    nat_train, contra = sets["expertqa-train"], sets["expertqa-train-contra"]
    mixed = nat.join(nat_train, contra)
    share = len(contra["is_true"]) / len(mixed["is_true"])
    shipped = ThreeConditionCalibrator.from_json(ROOT / "franq" / "data" / LONG)
    fits = {"shipped (gold conditions, 17% corrupted, fact/corruption pairs in T_n)":
            lambda s: shipped.predict(nat.inputs(s))}
    for label, train in (("0%", nat_train), (f"{share:.0%}", mixed)):
        soft = ThreeConditionCalibrator(variant="soft").fit(nat.inputs(train), train["is_true"])
        fits[f"conditions before mixing (soft: verifier's P_s/P_c/P_n as weights), {label} corrupted"] = \
            (lambda c: lambda s: c.predict(nat.inputs(s)))(soft)
        if train is mixed:  # the corruptions teach T_c; the natural share of true claims is put back
            moved = ThreeConditionCalibrator(variant="soft", prior=float(nat_train["is_true"].mean())).fit(
                nat.inputs(train), train["is_true"])
            fits[f"conditions before mixing (soft), {label} corrupted, prior moved back to the natural share "
                 f"{moved.prior:.3f} (the refit: franq.fit.shipped_verifier.long_soft_calibrator)"] = \
                (lambda c: lambda s: c.predict(nat.inputs(s)))(moved)
        mm = nat.MixMapCalibrator().fit(train)
        fits[f"final map on the raw mix, {label} corrupted"] = mm.predict_set
    gold = nat.gold_conditions(nat_train) + nat.gold_conditions(contra, contradicted=True)
    keep = np.array([g is not None for g in gold])
    g_train = nat.subset(mixed, keep)
    cond = ThreeConditionCalibrator(variant="condition").fit(nat.inputs(g_train), g_train["is_true"],
                                                             condition=[g for g in gold if g is not None])
    fits[f"conditions before mixing (gold conditions), {share:.0%} corrupted"] = lambda s: cond.predict(nat.inputs(s))
    base = float(nat_train["is_true"].mean())
    fits[f"constant (train share true, {base:.3f})"] = lambda s: np.full(len(s["is_true"]), base)
    fits["raw three-condition mix (no calibration)"] = nat.raw3
    return fits


def short_fits(sets: dict) -> dict:
    from calibration.three_condition import ThreeConditionCalibrator
    from franq.fit import natural as nat

    train = sets["nq-train"]
    shipped = ThreeConditionCalibrator.from_json(ROOT / "franq" / "data" / SHORT)
    mm = nat.MixMapCalibrator().fit(train)
    base = float(train["is_true"].mean())
    return {"shipped (soft, nq-open train)": lambda s: shipped.predict(nat.inputs(s)),
            "final map on the raw mix (nq-open train)": mm.predict_set,
            f"constant (train share true, {base:.3f})": lambda s: np.full(len(s["is_true"]), base),
            "raw three-condition mix (no calibration)": nat.raw3}


def table(fits: dict, evals: dict) -> list[str]:
    from franq.fit import natural as nat

    lines = ["| fit | eval set | claims (true) | ECE [95% CI by answer] | Brier | constant Brier | AUROC |",
             "|---|---|---|---|---|---|---|"]
    for name, predict in fits.items():
        for ename, s in evals.items():
            m = nat.scores(predict(s), s, boot=300)
            lines.append(f"| {name} | {ename} | {m['n']} ({m['true']:.3f}) | {_fmt(m)} |")
    return lines


def main() -> int:
    from franq.fit import natural as nat

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--verifier", default=None, help="A verifier directory (default: the shipped one).")
    ap.add_argument("--cache", default=None, help="The verifier pass's cache (default: benchmarks/cache/natural-<verifier>.json).")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "calibration-natural.md"))
    ap.add_argument("--cached-only", action="store_true", help="Measure only the sets the cache holds.")
    args = ap.parse_args()
    t0 = time.perf_counter()
    sets = nat.natural_sets(ROOT / "datasets", args.verifier, cache=Path(args.cache) if args.cache else None,
                            echo=lambda m: print(m, file=sys.stderr),
                            compute=not args.cached_only)
    test = sets["expertqa-test"]
    long_evals = {"ExpertQA rand_test (natural)": test}
    if "expertqa-test-contra" in sets:
        contra = sets["expertqa-test-contra"]
        with_contra = nat.join(test, contra)
        long_evals[f"ExpertQA rand_test + contradicted copies ({len(contra['is_true']) / len(with_contra['is_true']):.0%})"] = \
            with_contra
    nq = sets["nq-test"]
    short_evals = {f"nq-open test, {v} passages": nat.subset(nq, [x == v for x in nq["variant"]])
                   for v in ("clean", "corrupted")}
    short = (["## Short form: fitted on nq-open train (300 questions), the embedded model's attempted answers", "",
              *table(short_fits(sets), short_evals), ""] if "nq-train" in sets else
             ["## Short form: not measured in this run (nq-open train not in the cache)", ""])
    left_out = [n for n in (*nat.LONG_SETS, *nat.SHORT_SETS) if n not in sets]
    out = [f"# Calibration on natural dev sets (issue 45 item 1); verifier {sets['verifier']}", "",
           f"Command: `OMP_NUM_THREADS=1 python benchmarks/bench_calibration_natural.py"
           f"{' --verifier ' + args.verifier if args.verifier else ''}{' --cached-only' if args.cached_only else ''}` ({time.perf_counter() - t0:.0f} s from the "
           "cache of the verifier's pass; the pass itself, about 40 minutes on one CPU thread, is cached in "
           "benchmarks/cache/natural-<verifier>.json). ECE: 10 equal-width bins; constant Brier: the best "
           "constant for the set (its own share true, p(1-p)); AUROC of P(true) for the truth labels. "
           "WiCE held out: not measured (no committed UQ values for its claims; the embedded model would have to "
           "score them).", "",
           "## Long form: fitted on the 120-answer ExpertQA train sample (its corrupted copies at the share named)", "",
           *([f"Sets not in this run (the verifier's pass was not finished): {left_out}.", ""] if left_out else []),
           *table(long_fits(sets), long_evals), "", *short]
    text = "\n".join(out)
    print(text)
    Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
