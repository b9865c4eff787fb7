"""franq.evaluation.tables: bootstrap intervals, tables, JSON and plots."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from franq.evaluation.tables import (MethodResult, bootstrap_cis, evaluate, plot_rejection_curves,
                                     plot_reliability, render_markdown, render_text,
                                     results_to_json)
from franq.evaluation.metrics import METRICS, auroc, pr_auc, prr

PNG = b"\x89PNG\r\n\x1a\n"


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.6).astype(float)
    return np.clip(0.4 * y + 0.6 * rng.random(n), 0, 1), y


def _row(name, group, **values):
    vals = {k: values.get(k.replace("-", "_"), math.nan) for k in METRICS}
    return MethodResult(name, group, vals, None, 10)


def bootstrap_ci(metric, p, y, **kwargs):
    return bootstrap_cis(p, y, metrics={"m": metric}, **kwargs)["m"]


def test_bootstrap_ci_contains_the_estimate_and_is_reproducible():
    p, y = _data()
    lo, hi = bootstrap_ci(prr, p, y, n_boot=200, seed=1)
    assert lo < prr(p, y) < hi and hi - lo < 0.5
    assert bootstrap_ci(prr, p, y, n_boot=200, seed=1) == (lo, hi)
    assert bootstrap_ci(prr, p, y, n_boot=200, seed=2) != (lo, hi)
    assert bootstrap_ci(prr, p, y, n_boot=200, seed=1, alpha=0.5)[0] > lo


def test_bootstrap_cis_share_resamples_across_metrics():
    p, y = _data()
    cis = bootstrap_cis(p, y, metrics={"AUROC": auroc, "PRR": prr}, n_boot=40, seed=4)
    assert cis["AUROC"] == bootstrap_ci(auroc, p, y, n_boot=40, seed=4)
    assert cis["PRR"] == bootstrap_ci(prr, p, y, n_boot=40, seed=4)


def test_bootstrap_rowwise_fast_path_matches_calling_the_metric():
    p, y = _data(60)
    for f in (pr_auc, auroc):
        slow = bootstrap_ci(lambda a, b: f(a, b), p, y, n_boot=30, seed=3)  # not in ROWWISE
        assert bootstrap_ci(f, p, y, n_boot=30, seed=3) == pytest.approx(slow, abs=1e-12)


def test_bootstrap_skips_one_class_resamples():
    # One false claim in 4: about (3/4)^4 = 32% of resamples hold only true claims.
    lo, hi = bootstrap_ci(auroc, [0.9, 0.8, 0.7, 0.1], [1, 1, 1, 0], n_boot=50)
    assert (lo, hi) == (1.0, 1.0)
    assert all(math.isnan(v) for v in bootstrap_ci(auroc, [0.9, 0.1], [1, 1], n_boot=20))
    with pytest.raises(ValueError, match="'n_boot'"):
        bootstrap_ci(auroc, [0.9, 0.1], [1, 0], n_boot=0)
    with pytest.raises(ValueError, match="'alpha'"):
        bootstrap_ci(auroc, [0.9, 0.1], [1, 0], alpha=1.5)


def test_evaluate_fills_every_metric_and_ece_only_for_probabilities():
    p, y = _data()
    r = evaluate("FRANQ", "FRANQ", p, y, ci=True, n_boot=20)
    assert set(r.values) == set(METRICS) == set(r.ci) and r.n == len(p)
    assert r.values["PRR"] == pytest.approx(prr(p, y))
    raw = evaluate("Neg. entropy", "General baselines", 5 * p - 3, y, probabilities=False, ci=True, n_boot=20)
    assert math.isnan(raw.values["ECE"]) and all(math.isnan(v) for v in raw.ci["ECE"])
    assert raw.values["AUROC"] == pytest.approx(r.values["AUROC"])
    with pytest.raises(ValueError, match="probabilities=False"):
        evaluate("Neg. entropy", "g", 5 * p - 3, y)


def test_markdown_groups_rows_marks_best_and_second_and_dashes_nan():
    rows = [_row("Max Claim Prob.", "General baselines", PR_AUC=0.058, PRR=-0.029, AUROC=0.6, ECE=0.2),
            _row("FRANQ calibrated", "FRANQ", PR_AUC=0.14, PRR=0.223, AUROC=0.7, ECE=0.05),
            _row("Perplexity", "General baselines", PR_AUC=0.1, PRR=0.3, AUROC=0.5)]
    md = render_markdown(rows, title="Long-form QA")
    lines = md.splitlines()
    assert lines[0] == "### Long-form QA"
    assert lines[2] == "| Method | PR-AUC ↑ | PRR ↑ | AUROC ↑ | ECE ↓ |"
    body = [ln for ln in lines if ln.startswith("| ") and "Method" not in ln]
    assert body == [
        "| *General baselines* | | | | |",
        "| Max Claim Prob. | .058 | -.029 | <u>.600</u> | <u>.200</u> |",
        "| Perplexity | <u>.100</u> | **.300** | .500 | – |",
        "| *FRANQ* | | | | |",
        "| FRANQ calibrated | **.140** | <u>.223</u> | **.700** | **.050** |",
    ]


def test_markdown_shows_intervals_and_ties_share_the_mark():
    a = MethodResult("A", "g", {"AUROC": 0.5584}, {"AUROC": (0.512, 0.6049)}, 10)
    b = MethodResult("B", "g", {"AUROC": 0.5581}, None, 10)
    md = render_markdown([a, b], title="t", columns=("AUROC",))
    assert "| A | **.558** [.51, .60] |" in md and "| B | **.558** |" in md


def test_text_table_is_plain_and_aligned():
    rows = [_row("A", "g1", PR_AUC=0.2, PRR=0.1, AUROC=0.6, ECE=0.1), _row("Longer name", "g2", PR_AUC=0.3)]
    txt = render_text(rows, title="T")
    assert "**" not in txt and "<u>" not in txt and "|" not in txt
    lines = txt.splitlines()
    assert lines[0] == "T" and lines.index("g1") < lines.index("g2")
    assert len({len(ln) for ln in lines[1:2] + [ln for ln in lines if ln.startswith("  ")]}) == 1
    assert ".300*" in txt and ".200+" in txt and "–" in txt


def test_json_keeps_every_field():
    p, y = _data()
    res = [evaluate("A", "g", p, y, ci=True, n_boot=30, note="120 claims"),
           evaluate("B", "h", -p, y, probabilities=False)]
    text = json.dumps(results_to_json(res), allow_nan=False)
    recs = json.loads(text)
    assert set(recs[0]) == {"name", "group", "values", "ci", "n", "note"}
    assert recs[1]["values"]["ECE"] is None and recs[1]["ci"] is None
    assert recs[0]["name"] == "A" and recs[0]["note"] == "120 claims" and recs[0]["n"] == len(p)
    assert all(lo <= hi for lo, hi in recs[0]["ci"].values())


def test_plots_write_png_files(tmp_path):
    p, y = _data()
    out = plot_rejection_curves({"FRANQ": (p, y), "noise": (np.random.default_rng(0).random(len(y)), y)},
                                tmp_path / "rej.png", title="rejection", max_rejection=0.5)
    assert out.read_bytes()[:8] == PNG
    out = plot_reliability({"FRANQ": (p, y), "const": (np.full(len(y), 0.6), y)}, tmp_path / "rel.png",
                           title="reliability")
    assert out.read_bytes()[:8] == PNG and out.stat().st_size < 200_000
    with pytest.raises(ValueError, match="same claims"):
        plot_rejection_curves({"a": (p, y), "b": (p, 1 - y)}, tmp_path / "x.png", title="x")
