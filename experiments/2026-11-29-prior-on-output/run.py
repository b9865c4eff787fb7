"""A new base rate applied to each map before mixing (shipped) or to the mixed P(true) (the
posterior, as Saerens et al. 2002 adjust it), side by side on benchmarks/bench_prior_shift.py's
deployments and the shipped long calibrator. See README.md beside this file.

    OMP_NUM_THREADS=1 python experiments/2026-11-29-prior-on-output/run.py
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
SHIPPED = ROOT / "franq" / "data" / "calibrator-long-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json"


def readings(cal, s) -> dict:
    """ECE and AUROC of ``cal`` on set ``s``: unadjusted; the true share given, per map and on the
    output; the EM estimate, per map and on the output."""
    from calibration.metrics import expected_calibration_error as ece
    from calibration.prior import em_prior_of, logit_shift, shift_probabilities
    from franq.evaluation.common import auroc
    from franq.fit import natural as nat
    from franq.fit.prior import estimate_prior

    X, y = nat.inputs(s), np.asarray(s["is_true"], dtype=float)
    share = float(np.clip(y.mean(), 1e-3, 1 - 1e-3))
    base = cal.base_rate
    cal.prior = None
    raw = cal.predict(X)
    cal.prior = share
    maps_oracle = cal.predict(X)
    cal.prior = None
    est_maps, _ = estimate_prior(cal, X)
    cal.prior = est_maps
    maps_em = cal.predict(X)
    cal.prior = None
    out_oracle = shift_probabilities(raw, logit_shift(base, share))
    est_out, _ = em_prior_of(raw, base)
    out_em = shift_probabilities(raw, logit_shift(base, est_out))

    def au(q):
        return round(float(auroc(q, y)), 4) if 0 < y.mean() < 1 else None

    return {"claims": len(y), "fitted": round(base, 4), "share": round(float(y.mean()), 4),
            "ece": {"none": ece(raw, y), "maps, true share": ece(maps_oracle, y), "output, true share": ece(out_oracle, y),
                    "maps, EM": ece(maps_em, y), "output, EM": ece(out_em, y)},
            "auroc": {"none": au(raw), "maps, true share": au(maps_oracle), "output, true share": au(out_oracle)},
            "em": {"maps": round(est_maps, 4), "output": round(est_out, 4)}}


def main() -> int:
    from bench_prior_shift import resample_to

    from franq.calibrate import load_calibrator
    from franq.fit import natural as nat
    from franq.fit.calibrator import fit_three_condition_calibrator

    sets = nat.natural_sets(ROOT / "datasets", None, echo=lambda m: print(m, file=sys.stderr), compute=False)

    def fitted(s, variant="condition"):
        return fit_three_condition_calibrator(nat.training_claims_of(s), variant=variant, min_per_condition=0)[0]

    def variant(s, v):
        return nat.subset(s, [x == v for x in s["variant"]])

    eqa, eqa_soft, shipped = fitted(sets["expertqa-train"]), fitted(sets["expertqa-train"], "soft"), load_calibrator(SHIPPED)
    test, contra = sets["expertqa-test"], sets["expertqa-test-contra"]
    both = nat.join(test, contra)
    nq_train, nq_test = sets["nq-train"], sets["nq-test"]
    rows = {}
    for cal_name, cal in (("shipped long file (condition, 17% copies)", shipped), ("ExpertQA train, condition", eqa),
                          ("ExpertQA train, soft", eqa_soft)):
        rows[f"{cal_name} -> rand_test (natural)"] = readings(cal, test)
        rows[f"{cal_name} -> rand_test + contradicted copies"] = readings(cal, both)
        for share in (0.5, 0.3):
            rows[f"{cal_name} -> rand_test + copies, resampled to {share:.0%} true"] = readings(cal, resample_to(both, share))
    clean = fitted(variant(nq_train, "clean"), "soft")
    corrupted = fitted(variant(nq_train, "corrupted"), "soft")
    rows["nq-open train clean, soft -> test corrupted"] = readings(clean, variant(nq_test, "corrupted"))
    rows["nq-open train corrupted, soft -> test clean"] = readings(corrupted, variant(nq_test, "clean"))
    cols = ("none", "maps, true share", "output, true share", "maps, EM", "output, EM")
    lines = ["| calibrator -> deployment | claims | fitted share | share true | EM: maps / output | ECE "
             + " | ECE ".join(cols) + " | AUROC none / maps / output (true share) |",
             "|---|---|---|---|---|" + "---|" * len(cols) + "---|"]
    for name, r in rows.items():
        a = r["auroc"]
        lines.append(f"| {name} | {r['claims']} | {r['fitted']:.3f} | {r['share']:.3f} | {r['em']['maps']:.3f} / "
                     f"{r['em']['output']:.3f} | " + " | ".join(f"{r['ece'][c]:.3f}" for c in cols) + " | "
                     + (" / ".join(f"{a[c]:.3f}" for c in ("none", "maps, true share", "output, true share"))
                        if a["none"] is not None else "-") + " |")
    (HERE / "result.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    lines += ["", *anchored()]
    (HERE / "result.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0



def anchored() -> list[str]:
    """The output rule shifted from the calibrator's mean output on its own fit claims (the prior
    its posteriors imply) instead of their share true, with EM from there: table rows."""
    from calibration.metrics import expected_calibration_error as ece
    from calibration.prior import em_prior_of, logit_shift, shift_probabilities
    from franq.fit import natural as nat

    cases = deployments()
    lines = [("| calibrator -> deployment | fitted share / mean output on its fit claims | share true | EM estimate | "
              "ECE, true share | ECE, EM |"), "|---|---|---|---|---|---|"]
    for name, cal, fit_on, dep in cases:
        cal.prior = None
        anchor = float(np.mean(cal.predict(nat.inputs(fit_on))))
        raw = cal.predict(nat.inputs(dep))
        y = np.asarray(dep["is_true"], dtype=float)
        share = float(np.clip(y.mean(), 1e-3, 1 - 1e-3))
        est, _ = em_prior_of(raw, anchor)
        lines.append(f"| {name} | {cal.base_rate:.3f} / {anchor:.3f} | {y.mean():.3f} | {est:.3f} | "
                     f"{ece(shift_probabilities(raw, logit_shift(anchor, share)), y):.3f} | "
                     f"{ece(shift_probabilities(raw, logit_shift(anchor, est)), y):.3f} |")
    return lines


def deployments() -> list[tuple]:
    """``(name, calibrator, its fit claims, deployment)`` for the anchored rows (also read by
    ../2026-11-29-prior-estimators)."""
    from bench_prior_shift import resample_to

    from franq.calibrate import load_calibrator
    from franq.fit import natural as nat
    from franq.fit.calibrator import fit_three_condition_calibrator

    sets = nat.natural_sets(ROOT / "datasets", None, echo=lambda m: print(m, file=sys.stderr), compute=False)

    def variant(s, v):
        return nat.subset(s, [x == v for x in s["variant"]])

    test, both = sets["expertqa-test"], nat.join(sets["expertqa-test"], sets["expertqa-test-contra"])
    shipped_fit = nat.join(sets["expertqa-train"], sets["expertqa-train-contra"])  # its claims, unweighted
    shipped = load_calibrator(SHIPPED)
    cases = [("shipped long file -> rand_test", shipped, shipped_fit, test),
             ("shipped long file -> rand_test + copies", shipped, shipped_fit, both)]
    cases += [(f"shipped long file -> rand_test + copies, resampled to {share:.0%} true", shipped, shipped_fit,
               resample_to(both, share)) for share in (0.5, 0.3)]
    for v in ("condition", "soft"):
        cal = fit_three_condition_calibrator(nat.training_claims_of(sets["expertqa-train"]), variant=v, min_per_condition=0)[0]
        cases += [(f"ExpertQA train, {v} -> rand_test", cal, sets["expertqa-train"], test),
                  (f"ExpertQA train, {v} -> rand_test + copies", cal, sets["expertqa-train"], both)]
        cases += [(f"ExpertQA train, {v} -> rand_test + copies, resampled to {share:.0%} true", cal,
                   sets["expertqa-train"], resample_to(both, share)) for share in (0.5, 0.3)]
    for a, b in (("clean", "corrupted"), ("corrupted", "clean")):
        fit_on = variant(sets["nq-train"], a)
        cal = fit_three_condition_calibrator(nat.training_claims_of(fit_on), variant="soft", min_per_condition=0)[0]
        cases.append((f"nq-open train {a} -> test {b}", cal, fit_on, variant(sets["nq-test"], b)))
    return cases


if __name__ == "__main__":
    raise SystemExit(main())
