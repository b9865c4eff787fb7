"""What ``franq fit calibrator`` says about a fit before you trust it (issue 45 item 3):
duplicate answers merged or refused (:func:`dedupe`), each map's label count against what
a calibrator needs (:func:`label_check`), K-fold cross-validation by answer with bootstrap
intervals (:func:`cross_validate`), the threshold table and the threshold for a target
precision or false-alarm rate checked on held-out folds (:func:`choose_threshold`).

Every number here is out of fold: a claim's calibrated P(true) comes from the calibrator
fitted on the other folds' answers, never on its own answer.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from calibration.metrics import brier_score, expected_calibration_error, pick_threshold, threshold_table
from franq.errors import InputError

LABELS_NEEDED = 100
"""Labelled claims per condition map at which held-out ECE settles at or below .05 on
natural ExpertQA answers (the learning curve of benchmarks/bench_calibration_labels.py,
benchmarks/results/calibration-labels.md): below it ``franq fit calibrator`` warns, naming the map."""
LABELS_REFUSED = 10
"""Below this many labelled claims a condition's isotonic map is refused (``--flat`` it instead)."""
MAPS = {"supported": "T_s, P(true | supported)", "contradicted": "T_c, P(true | contradicted)",
        "not_mentioned": "T_n, P(true | not mentioned)", "faithful": "UQ_faith map, P(true | faithful)",
        "unfaithful": "UQ_unfaith map, P(true | unfaithful)"}
"""Each condition's map, as the messages name it."""


# ---------------------------------------------------------------------- duplicates
def _content(line) -> tuple:
    r = line.result
    labels = tuple(sorted(d.items()) for d in ((line.example and line.example.claim_labels) or ()))
    return (r.question, r.answer, tuple(c.claim.text for c in r.claims), labels)


def dedupe(lines: list, echo=print) -> list:
    """``lines`` with each answer id once: a repeat of an id with the same question, answer,
    claims and labels is merged into the first (a notice says how many); a repeat that
    differs is refused, naming both lines. Lines without an id are distinct answers."""
    seen: dict[str, tuple] = {}
    out, merged = [], 0
    for line in lines:
        if line.id is None:
            out.append(line)
            continue
        key = str(line.id)
        if key in seen:
            where, content = seen[key]
            if content != _content(line):
                raise InputError(f"{line.where}: id {key!r} repeats {where} with another question, answer, claims or "
                                 "labels; give each answer its own id (a claim must never be counted twice)")
            merged += 1
            continue
        seen[key] = (line.where, _content(line))
        out.append(line)
    if merged:
        echo(f"note: {merged} record(s) repeat an earlier record's id with the same content: merged into it "
             f"(each claim counted once)")
    return out


# ---------------------------------------------------------------------- label counts
def label_check(counts: dict, *, flat: tuple[str, ...] = (), needed: int = LABELS_NEEDED,
                refused: int = LABELS_REFUSED) -> list[str]:
    """Warnings for each fitted condition map with fewer than ``needed`` labelled claims
    (weighted), naming the map; an :class:`InputError` when one has fewer than ``refused``."""
    warnings = []
    for cond, name in MAPS.items():
        c = counts.get(cond)
        if not isinstance(c, dict) or cond in flat:
            continue
        n = float(c.get("weight", 0))
        if n < refused:
            raise InputError(f"the {cond} condition has {n:g} labelled claims: too few for its map ({name}); "
                             f"about {needed} are needed (benchmarks/results/calibration-labels.md). Label more "
                             f"{cond} claims, or fit that map flat (--flat {cond}: its share of true claims)")
        if n < needed:
            warnings.append(f"{name}: only {n:g} labelled claims ({c.get('true', 0):g} true, {c.get('false', 0):g} "
                            f"false); held-out ECE settles at <= .05 from about {needed} per condition "
                            f"(benchmarks/results/calibration-labels.md): treat this map's probabilities as rough")
    return warnings


# ---------------------------------------------------------------------- cross-validation
def raw_mix(data) -> np.ndarray:
    """The uncalibrated P(true) of ``data``'s claims: the three-condition mix where they carry
    P_c and P_n, else the paper's binary mix."""
    a, b = data.uq_faith, data.uq_unfaith
    if data.p_contradicted is not None:
        return (data.p_faithful + data.p_contradicted) * a + data.p_not_mentioned * b
    return data.p_faithful * a + (1.0 - data.p_faithful) * b


def fold_of(groups: np.ndarray, folds: int, seed: int = 0) -> np.ndarray:
    """Per claim, its fold (0..folds-1): answers (``groups``) shuffled with ``seed`` and dealt
    round-robin, so the claims of one answer share a fold."""
    answers = np.unique(groups)
    if folds < 2:
        raise InputError(f"--folds: expected at least 2, got {folds}")
    if len(answers) < folds:
        raise InputError(f"--folds {folds}: only {len(answers)} labelled answer(s); cross-validation by answer "
                         "needs at least one answer per fold: label more answers or use fewer folds")
    order = np.random.default_rng(seed).permutation(answers)
    fold = {g: k % folds for k, g in enumerate(order)}
    return np.array([fold[g] for g in groups])


def out_of_fold(data, fit: Callable, folds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold calibrated P(true) and the constant predictor's (each fold's training share
    true), from ``fit(train_claims) -> calibrator``."""
    p, const = np.empty(len(data)), np.empty(len(data))
    for k in np.unique(folds):
        held = folds == k
        train = data.subset(~held)
        p[held] = fit(train).predict(data.subset(held).inputs())
        const[held] = train.is_true.mean()
    return p, const


def _interval(stat, p, y, groups) -> list[float]:
    from franq.evaluation.common import bootstrap

    point, lo, hi = bootstrap(stat, p, y, groups=list(groups), n_boot=300)
    return [round(point, 4), round(lo, 4), round(hi, 4)]


def cv_metrics(p: np.ndarray, raw: np.ndarray, const: np.ndarray, y: np.ndarray, groups: np.ndarray) -> dict:
    """Held-out ECE, Brier, AUROC of the calibrated and raw P(true), each ``[value, low,
    high]`` (95% bootstrap over answers, 300 resamples), and the constant predictor's Brier."""
    from franq.evaluation.common import auroc

    def auc(q, t):
        return auroc(q, t) if 0 < t.sum() < len(t) else float("nan")

    out = {}
    for name, q in (("calibrated", p), ("raw", raw)):
        out[name] = {"ece": _interval(expected_calibration_error, q, y, groups),
                     "brier": _interval(brier_score, q, y, groups),
                     "auroc": _interval(auc, q, y, groups)}
    out["constant"] = {"brier": _interval(brier_score, const, y, groups)}
    return out


def cross_validate(data, fit: Callable, *, folds: int = 5, seed: int = 0) -> tuple[dict, np.ndarray, np.ndarray]:
    """K-fold cross-validation of ``fit`` by answer: ``(report, out-of-fold P(true), folds)``."""
    groups = data.groups if data.groups is not None else np.arange(len(data))
    fold = fold_of(groups, folds, seed)
    p, const = out_of_fold(data, fit, fold)
    report = {"folds": folds, "seed": seed, "n_claims": len(data), "n_answers": int(len(np.unique(groups))),
              "n_true": int(data.is_true.sum()), **cv_metrics(p, raw_mix(data), const, data.is_true, groups)}
    return report, p, fold


# ---------------------------------------------------------------------- --holdout
def split_holdout(data, fraction: float, *, seed: int = 0) -> tuple:
    """(train, held-apart) claims, split by answer: claims of one answer stay together, so a
    held-apart answer was never seen in the fit. ``fraction`` of the answers are held apart."""
    if not 0.0 < fraction < 1.0:
        raise InputError(f"--holdout: expected a fraction between 0 and 1 (e.g. 0.2), got {fraction!r}")
    groups = data.groups if data.groups is not None else np.arange(len(data))
    answers = np.unique(groups)
    n_held = int(round(fraction * len(answers)))
    if n_held < 1 or n_held >= len(answers):
        raise InputError(f"--holdout {fraction:g}: {len(answers)} labelled answer(s) cannot be split into a "
                         f"training part and a held-apart part; label more answers or change the fraction")
    held = np.random.default_rng(seed).choice(answers, size=n_held, replace=False)
    mask = np.isin(groups, held)
    return data.subset(~mask), data.subset(mask)


def holdout_metrics(cal, data) -> dict:
    """ECE, Brier and AUROC on held-apart claims: raw P(true) (the uncalibrated mix) and the
    fitted calibrator's P(true). AUROC is NaN (null in JSON) when one class only."""
    from franq.evaluation.common import auroc

    raw = raw_mix(data)
    fitted = cal.predict(data.inputs())
    out = {"n_claims": len(data), "n_answers": int(len(np.unique(data.groups))) if data.groups is not None else None,
           "n_true": int(data.is_true.sum())}
    for name, p in (("raw", raw), ("calibrated", fitted)):
        a = auroc(p, data.is_true)
        out[name] = {"ece": round(expected_calibration_error(p, data.is_true), 4),
                     "brier": round(brier_score(p, data.is_true), 4),
                     "auroc": None if a != a else round(a, 4)}
    return out


# ---------------------------------------------------------------------- thresholds
def table_rows(p: np.ndarray, y: np.ndarray, thresholds=None) -> list[dict]:
    return [{"threshold": r.threshold, "precision": _r(r.precision), "caught": _r(r.caught),
             "flagged": _r(r.flagged), "false_alarm": _r(r.false_alarm)} for r in threshold_table(p, y, thresholds)]


def _r(v: float):
    return None if v != v else round(v, 4)


def choose_threshold(p: np.ndarray, y: np.ndarray, folds: np.ndarray, *, target_precision: float | None = None,
                     target_false_alarm: float | None = None) -> dict:
    """The threshold for the target on all out-of-fold P(true) (what the calibrator file
    stores), and its check: for each fold, the threshold picked on the other folds and the
    precision (or false-alarm rate) it gives on that fold."""
    kw = {"target_precision": target_precision, "target_false_alarm": target_false_alarm}
    metric = "precision" if target_precision is not None else "false_alarm"
    target = target_precision if target_precision is not None else target_false_alarm
    best = pick_threshold(p, y, **kw)
    if best is None:
        raise InputError(f"no threshold gives a {metric.replace('_', '-')} of {'at least' if metric == 'precision' else 'at most'} "
                         f"{target:g} on these claims' held-out P(true); see the threshold table and lower the target")
    per_fold = []
    for k in np.unique(folds):
        held = folds == k
        pick = pick_threshold(p[~held], y[~held], **kw)
        if pick is None:
            continue
        row = table_rows(p[held], y[held], [pick.threshold])[0]
        per_fold.append({"fold": int(k), "threshold": round(pick.threshold, 4), metric: row[metric]})
    got = [f[metric] for f in per_fold if f[metric] is not None]
    return {"target": {metric: target}, "threshold": round(best.threshold, 4), "precision": _r(best.precision),
            "caught": _r(best.caught), "flagged": _r(best.flagged), "false_alarm": _r(best.false_alarm),
            "held_out": per_fold,
            "held_out_mean": None if not got else round(float(np.mean(got)), 4),
            "held_out_max_gap": None if not got else round(float(np.max(np.abs(np.array(got) - target))), 4)}


def format_cv(report: dict) -> list[str]:
    """The cross-validation part of the fit report, as printed."""
    cv = report.get("cv")
    if not cv:
        return []

    def iv(v):
        return "n/a" if v[0] != v[0] else f"{v[0]:.3f} [{v[1]:.3f}, {v[2]:.3f}]"

    lines = [f"{cv['folds']}-fold cross-validation by answer ({cv['n_answers']} answers, {cv['n_claims']} claims, "
             f"{cv['n_true']} true); held out, 95% bootstrap over answers:",
             f"  ECE    calibrated {iv(cv['calibrated']['ece'])}   raw mix {iv(cv['raw']['ece'])}",
             f"  Brier  calibrated {iv(cv['calibrated']['brier'])}   raw mix {iv(cv['raw']['brier'])}   constant "
             f"(training share true) {iv(cv['constant']['brier'])}",
             f"  AUROC  calibrated {iv(cv['calibrated']['auroc'])}   raw mix {iv(cv['raw']['auroc'])}",
             "threshold table (held-out P(true); likely_false = P(true) < threshold):",
             "  threshold | precision of likely_false | false claims caught | claims flagged | true claims flagged"]
    for r in cv["thresholds"]:
        lines.append("  " + " | ".join(["%9.2f" % r["threshold"]] + ["%s" % ("n/a" if r[k] is None else f"{r[k]:.3f}")
                                        for k in ("precision", "caught", "flagged", "false_alarm")]))
    pick = cv.get("chosen")
    if pick:
        (metric, target), = pick["target"].items()
        lines.append(f"threshold for {metric.replace('_', '-')} {target:g}: {pick['threshold']:g} (precision "
                     f"{pick['precision']}, caught {pick['caught']}, flagged {pick['flagged']}); picked on the other "
                     f"folds, it gives {metric.replace('_', '-')} {pick['held_out_mean']} on average on each held-out "
                     f"fold (largest gap to the target {pick['held_out_max_gap']}); stored in the calibrator file")
        gap = pick["held_out_max_gap"]
        if gap is not None and gap > 0.05:
            lines.append(f"warning: the threshold misses its target by {gap:g} on a held-out fold: "
                         f"{cv['n_claims'] - cv['n_true']:g} false claims are too few to hold a {metric.replace('_', '-')} "
                         "within .05 (benchmarks/results/calibration-labels.md: with 200 ExpertQA claims, about 13 "
                         "false, 27% of draws did at precision .1); label more false claims")
    return lines
