"""How well could any one map of the fast mode's P_supported be calibrated on the natural dev
sets at once? (issue 46.3's last target: the fast P(true)'s ECE <= .05 on each natural dev set.)

The bound: maps fitted on the dev sets themselves (in sample, so optimistic), each evaluated
on every set. Per set alone (the floor of what any map reaches there), pooled over the sets
(isotonic, and any function of P_s: 20 quantile bins), pooled with each set weighted equally.
A map fitted on the very claims it is scored on is a bound, not a candidate: nothing here ships.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from sklearn.isotonic import IsotonicRegression

from calibration.metrics import ece_floor, expected_calibration_error
from franq.evaluation.common import auroc
from franq.fit import shipped_fast as fast

OUT = Path(__file__).resolve().parent


def raw_sets() -> dict[str, dict[str, list]]:
    cache = OUT / "raw.json"
    if cache.exists():
        return json.loads(cache.read_text())
    parts = fast.set_arrays(ROOT / "datasets", fast.DEV)
    out = {name: {k: [str(v) if k == "preset" else float(v) for v in a[k]] for k in ("p", "y", "preset")}
           for name, a in parts.items()}
    cache.write_text(json.dumps(out))
    return out


def iso(p, y, w=None):
    m = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(p, y, sample_weight=w)
    return m.predict


def binned(p, y, w=None, bins=20):
    edges = np.unique(np.quantile(p, np.linspace(0, 1, bins + 1)))
    w = np.ones(len(p)) if w is None else w
    idx = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, len(edges) - 2)
    means = np.array([np.average(y[idx == b], weights=w[idx == b]) if (idx == b).any() else 0.5
                      for b in range(len(edges) - 1)])
    return lambda q: means[np.clip(np.searchsorted(edges, q, side="right") - 1, 0, len(edges) - 2)]


def main() -> None:
    torch.set_num_threads(1)
    raw = raw_sets()
    sets = {}
    for name, a in raw.items():
        p, y, preset = np.array(a["p"]), np.array(a["y"]), np.array(a["preset"])
        for kind in ("fast", "fast_short"):
            keep = preset == kind
            if keep.sum() >= 20:
                sets[f"{name} `{kind}`"] = (p[keep], y[keep])
    lines = ["| map fitted on (in sample) | " + " | ".join(sets) + " |", "|---|" + "---|" * len(sets)]
    row = ["claims (share true; AUROC of P_s)"]
    row += [f"{len(y)} ({y.mean():.3f}; {auroc(p, y) if 0 < y.mean() < 1 else float('nan'):.3f})" for p, y in sets.values()]
    lines.append("| " + " | ".join(row) + " |")
    floors = [ece_floor(np.full(len(y), y.mean()), n_sim=300)[0] for _, y in sets.values()]
    lines.append("| ECE floor of a calibrated constant (median of 300 draws) | "
                 + " | ".join(f"{f:.3f}" for f in floors) + " |")
    result = {}

    def add(label, fitted, kind):
        eces = [expected_calibration_error(np.clip(fitted(p), 0, 1), y) if name.endswith(f"`{kind}`") else None
                for name, (p, y) in sets.items()]
        result[label] = eces
        lines.append(f"| {label} | " + " | ".join("-" if e is None else f"{e:.3f}" for e in eces) + " |")

    own = {}
    for name, (p, y) in sets.items():  # out of fold: what a map fitted on this set alone reaches on it
        fold = np.arange(len(y)) % 5
        q = np.empty(len(y))
        for k in range(5):
            q[fold == k] = iso(p[fold != k], y[fold != k])(p[fold == k])
        own[name] = expected_calibration_error(q, y)
    result["own, 5-fold"] = list(own.values())
    lines.append("| each set alone, isotonic, 5-fold out of fold | " + " | ".join(f"{e:.3f}" for e in own.values()) + " |")
    for kind in ("fast", "fast_short"):
        mine = [k for k in sets if k.endswith(f"`{kind}`")]
        p = np.concatenate([sets[k][0] for k in mine])
        y = np.concatenate([sets[k][1] for k in mine])
        w = np.concatenate([np.full(len(sets[k][1]), 1.0 / len(sets[k][1])) for k in mine])
        tag = f"the `{kind}` claims of " + " + ".join(k.split(" `")[0] for k in mine)
        add(f"{tag}, pooled, isotonic", iso(p, y), kind)
        add(f"{tag}, each set weighted equally, isotonic", iso(p, y, w), kind)
        add(f"{tag}, each set weighted equally, any function (20 quantile bins)", binned(p, y, w), kind)
    (OUT / "result.md").write_text("\n".join(lines) + "\n")
    (OUT / "result.json").write_text(json.dumps({"sets": list(sets), "ece": result}, indent=1))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
