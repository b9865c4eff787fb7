"""Score methods (with :func:`franq.evaluation.metrics.bootstrap_cis` intervals), paper-style tables (Table 2 layout) and plots."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from calibration.base import as_labels, as_probabilities, as_scores
from franq.evaluation.metrics import (METRICS, bootstrap_cis, ece, metric_direction, rejection_curve,  # noqa: F401
                                      reliability_bins)

COLUMNS = ("PR-AUC", "PRR", "AUROC", "ECE")
MISSING = "–"


@dataclass(frozen=True)
class MethodResult:
    """One table row: metric values by column name (NaN = not applicable)."""
    name: str
    group: str
    values: dict[str, float]
    ci: dict[str, tuple[float, float]] | None
    n: int
    note: str = ""


def evaluate(name: str, group: str, p_true: Any, is_true: Any, *, probabilities: bool = True,
             ci: bool = False, n_boot: int = 1000, seed: int = 0, note: str = "") -> MethodResult:
    """All of ``METRICS`` for one method. With ``probabilities=False`` (raw scores such as
    negative entropy) ECE is NaN; with True, ``p_true`` must lie in [0, 1]."""
    p = as_scores(p_true, "p_true")
    if probabilities and ((p < 0) | (p > 1)).any():
        as_probabilities(p, "p_true (pass probabilities=False for raw scores)")
    metrics = dict(METRICS) if probabilities else {k: f for k, f in METRICS.items() if f is not ece}
    values = {k: metrics[k](p, is_true) if k in metrics else math.nan for k in METRICS}
    cis = None
    if ci:
        got = bootstrap_cis(p, is_true, metrics=metrics, n_boot=n_boot, seed=seed)
        cis = {k: got.get(k, (math.nan, math.nan)) for k in METRICS}
    return MethodResult(name, group, values, cis, len(p), note)


# ---- tables ----------------------------------------------------------------------------

def _num(v: float, digits: int) -> str:
    """Paper style: '.558', '-.029', '1.000'."""
    s = f"{v:.{digits}f}"
    return s.replace("0.", ".", 1) if s.lstrip("-").startswith("0.") else s


def _ranks(results: Sequence[MethodResult], col: str) -> list[int]:
    """Per row: 1 = best value of the column, 2 = second best, 0 otherwise (values
    compared as shown, to 3 decimals, so equal-looking values share a rank)."""
    vals = [round(r.values.get(col, math.nan), 3) for r in results]
    order = sorted({v for v in vals if not math.isnan(v)}, reverse=metric_direction(col) == "max")
    rank = {v: i + 1 for i, v in enumerate(order[:2])}
    return [rank.get(v, 0) for v in vals]


def _cells(results: Sequence[MethodResult], columns: Sequence[str], marks: tuple[str, str, str, str]
           ) -> list[list[str]]:
    """Formatted value cells; ``marks`` = (best open, best close, second open, second close)."""
    ranks = {c: _ranks(results, c) for c in columns}
    rows = []
    for i, r in enumerate(results):
        row = []
        for c in columns:
            v = r.values.get(c, math.nan)
            if math.isnan(v):
                row.append(MISSING)
                continue
            s = _num(v, 3)
            if ranks[c][i] == 1:
                s = marks[0] + s + marks[1]
            elif ranks[c][i] == 2:
                s = marks[2] + s + marks[3]
            lo, hi = (r.ci or {}).get(c, (math.nan, math.nan))
            if not (math.isnan(lo) or math.isnan(hi)):
                s += f" [{_num(lo, 2)}, {_num(hi, 2)}]"
            row.append(s)
        rows.append(row)
    return rows


def _groups(results: Sequence[MethodResult]) -> list[str]:
    return list(dict.fromkeys(r.group for r in results))


def _header(c: str) -> str:
    return f"{c} {'↑' if metric_direction(c) == 'max' else '↓'}"


def render_markdown(results: Sequence[MethodResult], *, title: str,
                    columns: Sequence[str] = COLUMNS, settings: str = "") -> str:
    """A Markdown table like the paper's Table 2: rows grouped by ``group`` (first-seen
    order) under an italic group row; best value per column in bold, second best
    underlined; CI as '.558 [.51, .60]' when present; '–' where not applicable.
    ``settings``: what produced the numbers where it differs from the paper, printed
    between the title and the table, so the numbers never travel without it."""
    for c in columns:
        metric_direction(c)
    cells = _cells(results, columns, ("**", "**", "<u>", "</u>"))
    esc = lambda s: s.replace("|", "\\|")  # noqa: E731
    lines = [f"### {title}", "", *([f"Settings: {settings}.", ""] if settings else []),
             "| Method | " + " | ".join(_header(c) for c in columns) + " |", "|---|" + "---:|" * len(columns)]
    for g in _groups(results):
        lines.append(f"| *{esc(g)}* |" + " |" * len(columns))
        lines += [f"| {esc(r.name)} | " + " | ".join(row) + " |"
                  for r, row in zip(results, cells) if r.group == g]
    lines += ["", f"Best per column in **bold**, second best <u>underlined</u>; {MISSING}: not applicable."]
    lines += [f"- {esc(r.name)}: {r.note}" for r in results if r.note]
    return "\n".join(lines) + "\n"


def render_differences(rows: Sequence[tuple[str, str, str, str]]) -> str:
    """The "differences from the paper" table printed under a reproduced table: one row per
    setting that differs (what, the paper, here, why it stays); '' when there are none."""
    if not rows:
        return ""
    esc = lambda s: s.replace("|", "\\|")  # noqa: E731
    return "\n".join(["Differences from the paper:", "", "| | paper | here | why it stays |", "|---|---|---|---|",
                      *(f"| {' | '.join(esc(c) for c in row)} |" for row in rows)])


def render_text(results: Sequence[MethodResult], *, title: str, columns: Sequence[str] = COLUMNS) -> str:
    """The same table as plain aligned columns for a terminal: '*' best, '+' second best."""
    for c in columns:
        metric_direction(c)
    cells = _cells(results, columns, ("", "*", "", "+"))
    groups = _groups(results)
    names = ["  " + r.name for r in results] + ["Method"] + groups
    w0 = max(map(len, names))
    widths = [max([len(_header(c))] + [len(row[j]) for row in cells]) for j, c in enumerate(columns)]
    fmt = lambda first, rest: "  ".join([first.ljust(w0)] + [s.rjust(w) for s, w in zip(rest, widths)])  # noqa: E731
    lines = [title, fmt("Method", [_header(c) for c in columns])]
    lines.append("-" * len(lines[-1]))
    for g in groups:
        lines.append(g)
        lines += [fmt("  " + r.name, row) for r, row in zip(results, cells) if r.group == g]
    lines.append(f"* best, + second best, {MISSING} not applicable")
    return "\n".join(lines) + "\n"


# ---- JSON ------------------------------------------------------------------------------

def _json_num(v: float) -> float | None:
    return None if math.isnan(v) else float(v)


def results_to_json(results: Sequence[MethodResult]) -> list[dict]:
    """Plain JSON-safe dicts (NaN -> null, intervals as [lo, hi])."""
    return [{"name": r.name, "group": r.group, "n": r.n, "note": r.note,
             "values": {k: _json_num(v) for k, v in r.values.items()},
             "ci": None if r.ci is None else {k: [_json_num(lo), _json_num(hi)] for k, (lo, hi) in r.ci.items()}}
            for r in results]


# ---- plots -----------------------------------------------------------------------------

def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_rejection_curves(curves: Mapping[str, tuple[Any, Any]], path: str | Path, *, title: str,
                          max_rejection: float = 1.0) -> Path:
    """Share of true claims retained vs rejection rate: one line per method, plus the
    oracle and random curves. All methods must be scored on the same claims (same
    ``is_true``), so that they share one oracle."""
    if not curves:
        raise ValueError("'curves' is empty: give at least one method")
    labels = [as_labels(y, f"curves[{name!r}] is_true") for name, (_, y) in curves.items()]
    if any(len(y) != len(labels[0]) or not np.array_equal(y, labels[0]) for y in labels):
        raise ValueError("'curves': every method must be scored on the same claims (same is_true)")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 4))
    c = None
    for name, (p, y) in curves.items():
        c = rejection_curve(p, y, max_rejection=max_rejection, points=200)
        ax.plot(c.rejection, c.method, label=name, lw=1.4)
    ax.plot(c.rejection, c.oracle, "k--", lw=1, label="oracle")
    ax.plot(c.rejection, c.random, ":", color="grey", lw=1, label="random")
    ax.set(xlabel="rejection rate", ylabel="share of true claims retained", title=title)
    ax.legend(fontsize=7)
    return _save(fig, path)


def plot_reliability(series: Mapping[str, tuple[Any, Any]], path: str | Path, *, title: str,
                     n_bins: int = 10) -> Path:
    """Reliability diagram: one panel per method, share true per equal-width bin of
    P(true) (the bins of ECE), the diagonal, and the ECE in the panel title."""
    if not series:
        raise ValueError("'series' is empty: give at least one method")
    plt = _pyplot()
    k = len(series)
    fig, axes = plt.subplots(1, k, figsize=(2.8 * k, 3.2), squeeze=False, sharey=True)
    for ax, (name, (p, y)) in zip(axes[0], series.items()):
        b = reliability_bins(p, y, n_bins=n_bins)
        m = b.count > 0
        ax.bar(b.edges[:-1][m], b.share_true[m], width=1 / n_bins, align="edge", edgecolor="k", lw=0.5)
        ax.plot([0, 1], [0, 1], "k--", lw=1)
        ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="mean P(true)",
               title=f"{name}\nECE {_num(ece(p, y, n_bins=n_bins), 3)}")
        ax.title.set_fontsize(8)
    axes[0][0].set_ylabel("share true")
    fig.suptitle(title, fontsize=9)
    return _save(fig, path)


def _save(fig, path: str | Path) -> Path:
    import matplotlib.pyplot as plt

    path = Path(path)
    fig.tight_layout()
    fig.savefig(path, dpi=120, format="png")
    plt.close(fig)
    return path
