"""Fit linear probes on a model's internals from labelled claims (``franq fit probe``, also
``franq fit probe``): the features of FRANQ's passes, a logistic regression per target and
feature set with C chosen by cross-validation grouped by answer, written as a probe file
(:mod:`franq.internals.probe_file`)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from franq.errors import InputError
from franq.internals import KINDS, needs_closed
from franq.internals.probe_file import C_GRID, LABELS, TARGETS, Probe, ProbeFile, check_spec

def cross_validate(x: np.ndarray, y: np.ndarray, groups, *, folds: int = 5, c_grid=C_GRID):
    """Out-of-fold probabilities for each C (folds grouped by answer), the best C by AUROC,
    and its metrics."""
    from sklearn.metrics import average_precision_score, roc_auc_score
    from sklearn.model_selection import GroupKFold

    folds = min(folds, len(set(groups)))
    best = None
    for c in c_grid:
        oof = np.zeros(len(y))
        for tr, te in GroupKFold(n_splits=folds).split(x, y, groups):
            oof[te] = _fit(x[tr], y[tr], c).predict(x[te])
        auroc = float(roc_auc_score(y, oof))
        if best is None or auroc > best[1]:
            best = (c, auroc, float(average_precision_score(y, oof)), oof)
    c, auroc, pr_auc, oof = best
    return {"folds": folds, "grouped_by": "answer", "C": c, "auroc": round(auroc, 4), "pr_auc": round(pr_auc, 4)}, oof


@dataclass
class _Fitted:
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float

    def predict(self, x):
        z = self.intercept + ((x - self.mean) / self.scale) @ self.coef
        return 1.0 / (1.0 + np.exp(-z))


def _fit(x, y, c) -> _Fitted:
    from sklearn.linear_model import LogisticRegression

    mean, scale = x.mean(0), x.std(0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=c, max_iter=2000).fit((x - mean) / scale, y)
    return _Fitted(mean, scale, model.coef_[0], float(model.intercept_[0]))


def fit_probe(x: np.ndarray, y: np.ndarray, groups, *, target: str, features: dict, fitted_on: dict,
              folds: int = 5, c_grid=C_GRID) -> Probe:
    """A probe fitted on all of ``x, y`` with the C chosen by grouped cross-validation,
    whose metrics it records in ``cv``."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y).astype(int)
    if len(set(y.tolist())) != 2 or min(np.bincount(y)) < folds:
        raise InputError(f"{target}: need at least {folds} claims of each label to fit a probe, "
                         f"got {int((y == 1).sum())} positive and {int((y == 0).sum())} negative")
    cv, _ = cross_validate(x, y, list(groups), folds=folds, c_grid=c_grid)
    f = _fit(x, y, cv["C"])
    info = dict(fitted_on, n_claims=len(y), positive_rate=round(float(y.mean()), 4))
    return Probe(target, dict(features), tuple(f.mean.tolist()), tuple(f.scale.tolist()),
                 tuple(f.coef.tolist()), f.intercept, info, cv)


def labelled_features(franq, examples, specs: list[dict], *, batch_size: int = 4, progress=None):
    """Per feature spec, the claim-level feature matrix of every labelled, scorable claim of
    ``examples`` (raw :class:`~franq.io.Example` objects with ``claim_labels``), with their
    labels (``{label: array with nan where unlabelled}``, labels as in :data:`LABELS`) and
    answer ids (the CV groups). The closed-book pass runs only when a spec reads it."""
    from franq.internals import capture_for, claim_features

    capture = None
    for s in specs:
        capture = capture_for(s).union(capture)
    closed_book = any(needs_closed(s) for s in specs)
    names = tuple(dict.fromkeys(LABELS.values()))
    rows: dict[int, list] = {k: [] for k in range(len(specs))}
    labels: dict[str, list] = {t: [] for t in names}
    groups: list[str] = []
    examples = list(examples)
    for start in range(0, len(examples), batch_size):
        chunk = examples[start:start + batch_size]
        for ex, evidence in zip(chunk, franq.claim_evidence(chunk, capture=capture, closed_book=closed_book)):
            keep = [(i, e) for i, e in enumerate(evidence) if e is not None and ex.claim_labels
                    and any(ex.claim_labels[i].get(t) is not None for t in names)]
            if not keep:
                continue
            for k, s in enumerate(specs):
                rows[k].append(claim_features(s, [e for _, e in keep]))
            for t in names:
                labels[t] += [np.nan if ex.claim_labels[i].get(t) is None else float(ex.claim_labels[i][t])
                              for i, _ in keep]
            groups += [ex.stable_id()] * len(keep)
        if progress is not None:
            progress(len(chunk))
    if not groups:
        raise InputError(f"no scorable claim with a label ({', '.join(names)}) in the input")
    x = [np.concatenate(rows[k]) for k in range(len(specs))]
    return x, {t: np.array(v) for t, v in labels.items()}, groups


def entropy_split(values) -> float:
    """The threshold that splits semantic entropies into a low and a high group with the
    least within-group squared deviation (Kossen et al., 2024, section 4): low < threshold."""
    v = np.sort(np.asarray(values, dtype=np.float64))
    cuts = np.unique(v)[1:]
    if not len(cuts):
        raise InputError("semantic_entropy: every labelled answer has the same value; nothing to split")

    def cost(t):
        lo, hi = v[v < t], v[v >= t]
        return ((lo - lo.mean()) ** 2).sum() + ((hi - hi.mean()) ** 2).sum()

    return float(min(cuts, key=cost))


def target_labels(target: str, labels: dict[str, np.ndarray]) -> tuple[np.ndarray, dict]:
    """The 0/1 (nan: unlabelled) labels of ``target``, and what to record about them."""
    raw = labels.get(LABELS[target])
    if raw is None:
        return np.array([]), {}
    if target != "low_semantic_entropy":
        return raw, {}
    have = ~np.isnan(raw)
    if not have.any():
        return raw, {}
    threshold = entropy_split(raw[have])
    y = np.where(have, (raw < threshold).astype(float), np.nan)
    return y, {"semantic_entropy_threshold": round(threshold, 6)}


def fit_probe_file(model: str, specs: list[dict], x: list[np.ndarray], labels: dict[str, np.ndarray], groups,
                   *, fitted_on: dict, folds: int = 5, targets=TARGETS) -> tuple[ProbeFile, list[str]]:
    """One probe per (target with enough labels, feature spec); the targets skipped, with why."""
    probes, skipped = [], []
    groups = np.asarray(groups)
    for target in targets:
        y_all, info = target_labels(target, labels)
        have = ~np.isnan(y_all) if len(y_all) else np.zeros(len(groups), bool)
        y = y_all[have]
        if len(y) == 0:
            continue
        for spec, xs in zip(specs, x):
            try:
                probes.append(fit_probe(xs[have], y, groups[have], target=target, features=spec,
                                        fitted_on={**fitted_on, **info}, folds=folds))
            except InputError as exc:
                skipped.append(str(exc))
                break
    if not probes:
        raise InputError("no probe could be fitted: " + "; ".join(skipped or ["no labels"]))
    return ProbeFile(model, tuple(probes)), skipped


def parse_feature_specs(text: str) -> list[dict]:
    """``"lookback,hidden:16"`` -> ``[{"kind": "lookback"}, {"kind": "hidden", "layers": [16]}]``;
    ``hidden:8+16`` pools two layers into one probe; ``hidden_closed:16`` and
    ``hidden_diff:16`` read the closed-book pass; a ``@last`` suffix pools the last token only."""
    specs = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        body, at, pool = part.partition("@")
        kind, _, layers = body.partition(":")
        spec = {"kind": kind}
        if kind not in KINDS:
            check_spec(spec)  # names the known kinds
        if kind != "lookback":
            try:
                spec["layers"] = [int(v) for v in layers.split("+")]
            except ValueError:
                raise InputError(f"--features: {part!r}: layers are integers, e.g. hidden:16 or hidden:8+16") from None
        if at:
            spec["pool"] = pool
        specs.append(check_spec(spec))
    if not specs:
        raise InputError("--features: give at least one feature set (lookback, hidden:LAYER)")
    return specs


def read_labelled(path: str | Path) -> list:
    """The examples of a JSONL file of raw records with labelled claims; errors name the line."""
    from franq.io import load_json, parse_example

    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                where = f"{path} line {n}"
                out.append(parse_example(load_json(line, where), where))
    if not out:
        raise InputError(f"{path}: no records")
    return out


def fit_probes_from_file(franq, input_path: str, output: str, *, features: str = "lookback,hidden:16",
                         folds: int = 5, report_path: str | None = None, progress=None,
                         examples: list | None = None) -> tuple[dict, str]:
    """``franq fit probe``: run ``franq``'s passes over the labelled examples of
    ``input_path``, fit one probe per label and feature set, write the probe file and its
    report (returned, with the report's path). ``progress(n)`` is called as answers pass;
    ``examples``: the file already read with :func:`read_labelled` (not read again)."""
    import json
    import time

    from franq.internals.probe_file import data_hash

    stem = output.removesuffix(".json").removesuffix(".safetensors")
    specs = parse_feature_specs(features)
    examples = read_labelled(input_path) if examples is None else examples
    t = time.perf_counter()
    x, labels, groups = labelled_features(franq, examples, specs, progress=progress)
    passes_s = time.perf_counter() - t
    fitted_on = {"data": Path(input_path).name, "data_sha256": data_hash(input_path)}
    probes, skipped = fit_probe_file(franq.lm.name, specs, x, labels, groups, fitted_on=fitted_on, folds=folds)
    probes.save(output)
    report = {"model": probes.model, "input": input_path, "data_sha256": fitted_on["data_sha256"],
              "n_answers": len(set(groups)), "passes_seconds": round(passes_s, 2), "skipped": skipped,
              "probes": [{"target": p.target, "features": p.label, "n_claims": p.fitted_on["n_claims"],
                          "positive_rate": p.fitted_on["positive_rate"], "cv": p.cv} for p in probes.probes]}
    report_path = report_path or stem + ".report.json"
    Path(report_path).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report, report_path


def format_probe_report(report: dict, output: str, report_path: str) -> str:
    lines = [f"fitted {len(report['probes'])} probe(s) for {report['model']} on {report['n_answers']} answers "
             f"(passes {report['passes_seconds']:.1f} s)"]
    lines += [f"  {p['target']:<12} {p['features']:<14} {p['n_claims']} claims, {p['positive_rate']:.0%} positive; "
              f"{p['cv']['folds']}-fold CV AUROC {p['cv']['auroc']:.3f}, PR-AUC {p['cv']['pr_auc']:.3f} "
              f"(C={p['cv']['C']:g})" for p in report["probes"]]
    lines += [f"skipped: {s}" for s in report["skipped"]]
    lines.append(f"wrote {output} and {report_path}")
    return "\n".join(lines)
