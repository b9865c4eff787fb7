"""The shipped long calibrator against the same file with its not-mentioned map flat at that
map's base rate (what the knowledge term is worth when it ranks by length: see
../2026-11-29-knowledge-term-length): P(true), verdicts and their accuracy on ExpertQA
rand_test and WiCE held out (natural sets, the verifier pass's cache of
benchmarks/bench_calibration_natural.py) and the hand-written user-style set (the raw inputs
of ../2026-11-28-long-calibrator-frontier/userdev-inputs.json). See README.md.

    OMP_NUM_THREADS=1 python experiments/2026-11-29-flat-knowledge-map/run.py [SETS.json ...]

SETS.json: ``franq.fit.natural.compute_sets`` output (here: expertqa-test and wice-heldout,
one file each); without them the natural cache of bench_calibration_natural.py.
"""
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments" / "2026-11-28-long-calibrator-frontier"))
CAL = ROOT / "franq" / "data" / "calibrator-long-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json"
FIELDS = ("p_faithful", "p_contradicted", "p_not_mentioned", "uq_faith", "uq_unfaith")


def verdict_cells(claims, y) -> dict:
    from franq.verdicts import claim_verdict

    v = np.array([claim_verdict(c, 0.5)[0] for c in claims])
    lt, lf, un = v == "likely_true", v == "likely_false", v == "uncertain"
    given = lt | lf
    right = (lt & y).sum() + (lf & ~y).sum()
    return {"likely_true": int(lt.sum()), "likely_false": int(lf.sum()), "uncertain": int(un.sum()),
            "acc_given": round(float(right / given.sum()), 4), "all_true_on_given": round(float(y[given].mean()), 4),
            "gain_points": round(float(100 * (right / given.sum() - y[given].mean())), 1),
            "true_among_uncertain": None if not un.any() else round(float(y[un].mean()), 4)}


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("sets", nargs="*", help="franq.fit.natural.compute_sets output files (default: the natural cache)")
    args = ap.parse_args()
    from frontier import userdev_set

    from calibration.contract import ClaimInputs
    from calibration.metrics import expected_calibration_error
    from calibration.three_condition import ThreeConditionCalibrator
    from claims.types import Claim
    from franq.evaluation.metrics import auroc
    from franq.fit import natural as nat
    from franq.fit.generations import datasets_dir
    from franq.stages.result import knowledge_term
    from franq.types import ClaimScore, KnowledgeTerm

    cal = ThreeConditionCalibrator.from_json(CAL)
    sets = {}
    for f in args.sets:  # compute_sets output files, one set each (or the natural cache)
        sets.update({k: {g: np.asarray(x) if g in nat.FIELDS else x for g, x in v.items()}
                     for k, v in json.loads(Path(f).read_text()).items() if isinstance(v, dict)})
    if not sets:
        sets = nat.natural_sets(datasets_dir(), None, compute=False)
    named = {"ExpertQA rand_test": sets["expertqa-test"], "WiCE held out (support label)": sets["wice-heldout"],
             "userdev (hand-written)": userdev_set(str(ROOT / "experiments" / "2026-11-28-long-calibrator-frontier"
                                                       / "userdev-inputs.json"))}
    out = {}
    print("| set | map | claims | share true | ECE | Brier | AUROC | likely_true / likely_false / uncertain "
          "| right where given (all-true) | gain | true among uncertain |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, s in named.items():
        y = np.asarray(s["is_true"], dtype=bool)
        v = {f: np.asarray(s[f], dtype=float) for f in FIELDS}
        parts = cal.predict_components(ClaimInputs(v["p_faithful"], v["uq_faith"], v["uq_unfaith"],
                                                   p_contradicted=v["p_contradicted"],
                                                   p_not_mentioned=v["p_not_mentioned"]))
        base = parts.knowledge.base_rate
        flat = (v["p_faithful"] * parts.p_true_if_supported + v["p_contradicted"] * parts.p_true_if_contradicted
                + v["p_not_mentioned"] * base)
        for label, p in (("shipped", parts.p_true), (f"not-mentioned map flat at {base:.3f}", flat)):
            claims = []
            for k in range(len(y)):
                know = knowledge_term(parts, k) if label == "shipped" else KnowledgeTerm(base, base_rate=base)
                claims.append(ClaimScore(Claim("", ()), "scored", **{f: float(v[f][k]) for f in FIELDS},
                                         p_true_calibrated=float(p[k]), p_true_raw=0.0, knowledge=know))
            cells = {"ece": round(float(expected_calibration_error(p, y)), 4),
                     "brier": round(float(np.mean((p - y) ** 2)), 4),
                     "auroc": None if y.all() or not y.any() else round(float(auroc(p, y)), 4),
                     **verdict_cells(claims, y)}
            out.setdefault(name, {})[label] = cells
            print(f"| {name} | {label} | {len(y)} | {y.mean():.3f} | {cells['ece']:.3f} | {cells['brier']:.4f} | "
                  f"{cells['auroc']} | {cells['likely_true']} / {cells['likely_false']} / {cells['uncertain']} | "
                  f"{cells['acc_given']:.3f} ({cells['all_true_on_given']:.3f}) | {cells['gain_points']:+.1f} | "
                  f"{cells['true_among_uncertain']} |")
    Path(__file__).with_name("result.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
