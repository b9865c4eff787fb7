"""Estimating a deployment's share of true claims from its unlabelled claims: EM (Saerens et al.
2002, shipped) against PACC and BBSE (adjusted classify-and-count; Forman 2008, Lipton et al. 2018),
each moved from the calibrator's implied prior, on the deployments of
../2026-11-29-prior-on-output. See README.md and RULE.md beside this file.

    OMP_NUM_THREADS=1 python experiments/2026-11-29-prior-estimators/run.py
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
CLIP = (1e-3, 1 - 1e-3)


GAP = 0.05  # below it the two classes' outputs on the fit claims do not tell them apart: no estimate


def pacc(p_dep, m1, m0):
    return None if m1 - m0 < GAP else float(np.clip((np.mean(p_dep) - m0) / (m1 - m0), *CLIP))


def bbse(p_dep, tpr, fpr):
    return None if tpr - fpr < GAP else float(np.clip((np.mean(p_dep > 0.5) - fpr) / (tpr - fpr), *CLIP))


def main() -> int:
    from calibration.metrics import expected_calibration_error as ece
    from calibration.prior import em_prior_of, logit_shift, shift_probabilities
    from franq.fit import natural as nat

    spec = importlib.util.spec_from_file_location("prior_on_output", HERE.parent / "2026-11-29-prior-on-output" / "run.py")
    prior_on_output = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prior_on_output)
    cases = prior_on_output.deployments()
    rows = {}
    for name, cal, fit_on, dep in cases:
        cal.prior = None
        p_fit = cal.predict(nat.inputs(fit_on))
        y_fit = np.asarray(fit_on["is_true"], dtype=float) > 0.5
        anchor = float(np.mean(p_fit))
        m1, m0 = float(p_fit[y_fit].mean()), float(p_fit[~y_fit].mean())
        tpr, fpr = float(np.mean(p_fit[y_fit] > 0.5)), float(np.mean(p_fit[~y_fit] > 0.5))
        raw = cal.predict(nat.inputs(dep))
        y = np.asarray(dep["is_true"], dtype=float)
        share = float(np.clip(y.mean(), *CLIP))
        est = {"true share": share, "EM": em_prior_of(raw, anchor)[0], "PACC": pacc(raw, m1, m0),
               "BBSE": bbse(raw, tpr, fpr)}
        rows[name] = {"claims": len(y), "anchor": round(anchor, 4), "share": round(float(y.mean()), 4),
                      "m1": round(m1, 4), "m0": round(m0, 4), "tpr": round(tpr, 4), "fpr": round(fpr, 4),
                      "none": round(ece(raw, y), 4),
                      "estimate": {k: None if v is None else round(v, 4) for k, v in est.items()},
                      # no estimate: the calibrator is left where it is
                      "ece": {k: round(ece(raw if v is None else shift_probabilities(raw, logit_shift(anchor, v)), y), 4)
                              for k, v in est.items()}}
    keys = ("true share", "EM", "PACC", "BBSE")
    lines = ["| calibrator -> deployment | share true | anchor | m1 / m0 | estimate EM / PACC / BBSE | ECE none | "
             + " | ".join(f"ECE {k}" for k in keys) + " |", "|---|---|---|---|---|---|" + "---|" * len(keys)]
    for name, r in rows.items():
        e = r["estimate"]
        estimates = " / ".join("-" if e[k] is None else f"{e[k]:.3f}" for k in keys[1:])
        lines.append(f"| {name} | {r['share']:.3f} | {r['anchor']:.3f} | {r['m1']:.3f} / {r['m0']:.3f} | {estimates} | "
                     f"{r['none']:.3f} | " + " | ".join(f"{r['ece'][k]:.3f}" for k in keys) + " |")
    summary = {}
    for k in keys:
        v = np.array([r["ece"][k] for r in rows.values()])
        summary[k] = {"mean": round(float(v.mean()), 4), "worst": round(float(v.max()), 4),
                      "at or below .05": int((v <= 0.05).sum()),
                      "below unadjusted": int(sum(r["ece"][k] < r["none"] for r in rows.values()))}
    em = np.array([r["ece"]["EM"] for r in rows.values()])
    for k in ("PACC", "BBSE"):
        v = np.array([r["ece"][k] for r in rows.values()])
        summary[k]["worse than EM by > .02"] = int((v > em + 0.02).sum())
    lines += ["", "| estimator | mean ECE | worst | at or below .05 | below unadjusted | worse than EM by > .02 |",
              "|---|---|---|---|---|---|"]
    for k, s in summary.items():
        lines.append(f"| {k} | {s['mean']:.3f} | {s['worst']:.3f} | {s['at or below .05']} of {len(rows)} | "
                     f"{s['below unadjusted']} of {len(rows)} | {s.get('worse than EM by > .02', '-')} |")
    (HERE / "result.json").write_text(json.dumps({"rows": rows, "summary": summary}, indent=1) + "\n", encoding="utf-8")
    (HERE / "result.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
