"""The long-form calibrator's trade-off between calibration on natural answers and catching
contradictions, read on every set at once: each candidate fit (variant, share of synthetic
contradicted copies in the fit, prior) on ExpertQA rand_test (natural: ECE / Brier / AUROC),
its contradicted copies (caught: P(true) < .5), WiCE held out (AUROC against support) and the
hand-written user-style set (never fitted on: contradicted caught, supported kept, accuracy
against all-true, ECE against truth).

    OMP_NUM_THREADS=1 python experiments/2026-11-28-long-calibrator-frontier/frontier.py USERDEV_INPUTS.json

USERDEV_INPUTS.json: userdev_inputs.py's output (the raw inputs of the product path).
The natural sets come from the verifier pass's cache (benchmarks/bench_calibration_natural.py).
"""
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SHARES = (0.0, 0.03, 0.05, 0.08, 0.10, 0.13, 0.17)


def userdev_set(path: str) -> dict:
    rows = [r for r in json.loads(Path(path).read_text())["claims"] if r["status"] == "scored"]
    s = {f: np.array([r[f] for r in rows], dtype=float)
         for f in ("p_faithful", "p_contradicted", "p_not_mentioned", "uq_faith", "uq_unfaith")}
    s["is_true"] = np.array([r["label"] in ("supported", "not_mentioned_true") for r in rows], dtype=float)
    s["label"] = [r["label"] for r in rows]
    s["answer"] = [r["id"] for r in rows]
    return s


def fits(train, contra):
    """name -> predict(set) for every candidate."""
    from calibration.three_condition import ThreeConditionCalibrator
    from franq.fit import natural as nat

    out = {}
    shipped = ThreeConditionCalibrator.from_json(
        ROOT / "franq" / "data" / "calibrator-long-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json")
    out["shipped (condition, gold, 17%)"] = shipped
    n = len(train["is_true"])
    for share in SHARES:
        k = min(len(contra["is_true"]), round(share * n / (1 - share)))
        part = nat.subset(contra, np.arange(len(contra["is_true"])) < k)
        data = nat.join(train, part) if k else train
        soft = ThreeConditionCalibrator(variant="soft").fit(nat.inputs(data), data["is_true"])
        out[f"soft, {share:.0%} copies"] = soft
        gold = nat.gold_conditions(train) + (nat.gold_conditions(part, contradicted=True) if k else [])
        keep = np.array([g is not None for g in gold])
        if k:
            gdata = nat.subset(data, keep)
            out[f"condition (gold), {share:.0%} copies"] = ThreeConditionCalibrator(variant="condition").fit(
                nat.inputs(gdata), gdata["is_true"], condition=[g for g in gold if g is not None])
    return out


def row(name, cal, sets) -> dict:
    from calibration.metrics import expected_calibration_error
    from franq.evaluation.metrics import auroc
    from franq.fit import natural as nat

    test, tcontra, wice, ud = sets
    p = cal.predict(nat.inputs(test))
    m = nat.scores(p, test)
    pc = cal.predict(nat.inputs(tcontra))
    pw = cal.predict(nat.inputs(wice))
    pu = cal.predict(nat.inputs(ud))
    lab = np.array(ud["label"])
    yu = ud["is_true"]
    return {"fit": name, "eq_ece": m["ece"], "eq_brier": m["brier"], "eq_const": m["constant_brier"],
            "eq_auroc": m["auroc"], "copies_caught": float(np.mean(pc < 0.5)),
            "wice_auroc": auroc(pw, wice["is_true"]),
            "ud_contra_caught": float(np.mean(pu[lab == "contradicted"] < 0.5)),
            "ud_supported_kept": float(np.mean(pu[lab == "supported"] >= 0.5)),
            "ud_acc": float(np.mean((pu >= 0.5) == (yu > 0))), "ud_all_true": float(yu.mean()),
            "ud_ece": expected_calibration_error(pu, yu), "ud_auroc": auroc(pu, yu),
            "min_p": float(min(p.min(), pc.min(), pw.min(), pu.min())),
            "max_p": float(max(p.max(), pc.max(), pw.max(), pu.max()))}


def main(userdev_path: str) -> None:
    from franq.fit import natural as nat

    sets = nat.natural_sets(ROOT / "datasets", None, compute=False, echo=lambda m: print(m, file=sys.stderr))
    ud = userdev_set(userdev_path)
    evals = (sets["expertqa-test"], sets["expertqa-test-contra"], sets["wice-heldout"], ud)
    rows = [row(name, cal, evals) for name, cal in fits(sets["expertqa-train"], sets["expertqa-train-contra"]).items()]
    head = ("| fit | ExpertQA rand_test ECE | Brier (constant) | AUROC | its contradicted copies caught | "
            "WiCE AUROC | userdev contradicted caught | supported kept | accuracy (all-true) | ECE | AUROC |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        lines.append(f"| {r['fit']} | {r['eq_ece']:.3f} | {r['eq_brier']:.4f} ({r['eq_const']:.4f}) | {r['eq_auroc']:.3f} | "
                     f"{r['copies_caught']:.2f} | {r['wice_auroc']:.3f} | {r['ud_contra_caught']:.2f} | "
                     f"{r['ud_supported_kept']:.2f} | {r['ud_acc']:.3f} ({r['ud_all_true']:.3f}) | {r['ud_ece']:.3f} | "
                     f"{r['ud_auroc']:.3f} |")
    text = "\n".join(lines)
    print(text)
    here = Path(__file__).parent
    (here / "frontier.md").write_text(text + "\n", encoding="utf-8")
    (here / "frontier.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])
