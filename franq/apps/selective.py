"""``franq selective``: fit the decision policies of answering with faithfulness and
selective generation from labelled signals (papers 000 and 003).

Input: JSONL, one answered question a line, with numeric signals and 0/1 labels, e.g.
``{"id": ..., "p_true": 0.7, "nli": 0.4, "suff": 0.9, "self_p_true": 0.6, "correct": 1,
"closed_correct": 0}`` (the evaluation script writes such rows; `franq score` output
plus your labels works too once flattened).

    franq selective fit IN.jsonl -o selective.json --features p_true,nli,suff --coverage 0.8
    franq selective threshold IN.jsonl -o policy.json --score nli --fallback closed_book \\
        --fallback-label closed_correct

``fit``: logistic regression of the label on the features, out-of-fold (k-fold) metrics,
a threshold for the target coverage. ``threshold``: the answer/fallback threshold on one
answer check's score, chosen by k-fold cross-validation; `franq answer --policy` applies it.
"""
from __future__ import annotations

import math

import click

import franq
from franq.apps import answering
from franq.cli.options import Number
from franq.io import check_outputs, read_jsonl


def _rows(path: str) -> list[tuple[int, dict]]:
    """The rows of a JSONL file, read within franq's limits (:func:`franq.io.read_jsonl`:
    bounded lines, UTF-8, strict JSON); each row must be an object."""
    rows = []
    try:
        for n, row in read_jsonl(path, what="input"):
            if not isinstance(row, dict):
                raise click.ClickException(f"{path} line {n}: expected a JSON object, got {type(row).__name__}")
            rows.append((n, row))
    except franq.FranqError as exc:
        raise click.ClickException(str(exc)) from None
    if not rows:
        raise click.ClickException(f"{path}: no records")
    return rows


def _column(rows: list, name: str, path: str, *, binary: bool = False) -> list[float]:
    """The column ``name`` as finite numbers; ``binary``: a label, each 0 or 1 (true / false)."""
    out = []
    for n, r in rows:
        v = r.get(name)
        if isinstance(v, bool):
            v = float(v)
        try:
            ok = isinstance(v, (int, float)) and math.isfinite(float(v))
        except OverflowError:  # an integer too large for a float
            ok = False
        if not ok:
            shown = ("no such field" if name not in r else type(v).__name__ if not isinstance(v, (int, float))
                     else str(v)[:24])
            raise click.ClickException(f"{path} line {n}: '{name}' must be a number (finite), got {shown}")
        if binary and float(v) not in (0.0, 1.0):
            raise click.ClickException(f"{path} line {n}: '{name}' is a label: 0, 1, true or false, got {v!r:.24}")
        out.append(float(v))
    return out


def _fit_and_save(fit, output: str):
    try:
        policy = fit()
    except franq.FranqError as exc:
        raise click.ClickException(str(exc)) from None
    policy.to_json(output)
    return policy, policy.cv


def _check(output: str, input_path: str) -> None:
    try:
        check_outputs({"-o": output}, {"input": input_path})
    except franq.FranqError as exc:
        raise click.ClickException(str(exc)) from None


@click.group("selective")
def selective():
    """Fit answer / fall back / abstain policies from labelled signals."""


@selective.command("fit")
@click.argument("input_path", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Policy JSON to write.")
@click.option("--features", required=True, help="Comma-separated signal names to combine.")
@click.option("--label", default="correct", show_default=True, help="The 0/1 label column (answer correct).")
@click.option("--coverage", type=Number(0.0, 1.0, low_open=True), default=0.8, show_default=True,
              help="Target coverage: the share of questions to answer.")
@click.option("--combiner", type=click.Choice(["logistic", "xgboost"]), default="logistic", show_default=True,
              help="logistic (003 5.1) or xgboost (000 E.3: XGBoost, 3-fold out-of-fold scores).")
@click.option("--folds", type=click.IntRange(min=2), default=None, help="CV folds (default: 5; 3 for xgboost).")
@click.option("--seed", type=int, default=0, show_default=True)
def fit(input_path, output, features, label, coverage, combiner, folds, seed):
    """Selective generation (003 section 5.1, 000 E.3): a classifier over signals."""
    _check(output, input_path)
    rows = _rows(input_path)
    names = [f.strip() for f in features.split(",") if f.strip()]
    for name in names:
        _column(rows, name, input_path)
    y = _column(rows, label, input_path, binary=True)
    dicts = [r for _, r in rows]
    policy, cv = _fit_and_save(lambda: answering.SelectivePolicy.fit(dicts, y, features=names, coverage=coverage,
                                                                     k=folds, seed=seed, combiner=combiner), output)
    click.echo(f"fitted on {cv['n']} answers (accuracy {cv['accuracy']:.3f}); out-of-fold selective AUC "
               f"{cv['oof_selective_auc']:.3f} [{cv['oof_selective_auc_95'][0]:.3f}, {cv['oof_selective_auc_95'][1]:.3f}], "
               f"accuracy at {coverage:.0%} coverage {cv['oof_accuracy_at_coverage']:.3f}; wrote {output}", err=True)


@selective.command("threshold")
@click.argument("input_path", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Policy JSON to write.")
@click.option("--score", "score_col", required=True,
              help="The answer check's score column; also the policy's check name (one of "
                   f"{', '.join(answering.CHECKS)} for `franq answer --policy`).")
@click.option("--label", default="correct", show_default=True, help="The 0/1 label: the answer is correct.")
@click.option("--fallback", default="abstain", show_default=True, help="closed_book, abstain or model ([fallbacks.model] path).")
@click.option("--fallback-label", default=None,
              help="The 0/1 column: the fallback's answer is correct (closed_book, model).")
@click.option("--abstain-utility", type=Number(), default=0.0, show_default=True,
              help="Utility of abstaining (fallback abstain), against 1 for a correct answer and 0 for a wrong one.")
@click.option("--folds", type=click.IntRange(min=2), default=5, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
def threshold(input_path, output, score_col, label, fallback, fallback_label, abstain_utility, folds, seed):
    """Answering with faithfulness (000 section 6): a k-fold CV threshold for answer vs fallback."""
    _check(output, input_path)
    rows = _rows(input_path)
    s, y = _column(rows, score_col, input_path), _column(rows, label, input_path, binary=True)
    if fallback == "abstain":
        f = abstain_utility
    elif fallback_label:
        f = _column(rows, fallback_label, input_path, binary=True)
    else:
        raise click.ClickException(f"--fallback-label: name the column saying whether the {fallback} answer is correct")
    policy, cv = _fit_and_save(lambda: answering.ThresholdPolicy.fit(s, y, f, verify=score_col, fallback=fallback,
                                                                     k=folds, seed=seed), output)
    click.echo(f"threshold {policy.threshold:g} on {score_col}; {folds}-fold CV accuracy {cv['cv_accuracy']:.3f} vs "
               f"{cv['base_accuracy']:.3f} always answering (gain {cv['cv_gain']:+.3f}, 95% "
               f"[{cv['cv_gain_95'][0]:+.3f}, {cv['cv_gain_95'][1]:+.3f}]); wrote {output}", err=True)
