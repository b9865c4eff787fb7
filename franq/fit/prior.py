"""``franq fit prior``: a calibrator moved to a deployment where claims are true more or less
often than where it was fitted, without new labels (issue 45 item 4): a three-condition
calibrator, or a binary FRANQ one such as the fast preset's map of P_supported.
The shift itself is :mod:`calibration.prior` (P(true) moved on the logit scale by
``log(P'/(1-P')) - log(P/(1-P))``, P the calibrator's mean P(true) on its fit claims; each map
before mixing in files written before that); here the deployment base rate ``P'`` is given
(``--prior``), read from a few labelled claims of the deployment (``--from-labelled``), or
estimated by EM from unlabelled ``franq score`` output (``--from-records``; Saerens, Latinne &
Decaestecker 2002)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from calibration.contract import ClaimInputs
from calibration.franq import FranqCalibrator
from calibration.prior import at_bound, em_prior
from calibration.three_condition import ThreeConditionCalibrator
from franq.errors import InputError


def scored_inputs(path: str | Path, cal) -> ClaimInputs:
    """The raw values of every scored claim in ``franq score`` output at ``path`` (labels
    not needed), refused when it was scored by another stack than ``cal`` was fitted for.
    A stack without UQ terms (the fast preset: ``uq_faith`` and ``uq_unfaith`` are ``none``)
    reads UQ_faith 1 and UQ_unfaith 0, as the pipeline gives its calibrator."""
    from franq.results import read_results

    cols: dict[str, list[float]] = {k: [] for k in ("p_faithful", "uq_faith", "uq_unfaith", "p_contradicted",
                                                    "p_not_mentioned")}
    for line in read_results(path, with_input=True):
        diffs = cal.mismatches(line.result.stack.to_dict())
        if diffs:
            raise InputError(f"{line.where}: scored by another stack than the calibrator was fitted for "
                             f"({'; '.join(diffs)})")
        for i, c in enumerate(line.result.claims):
            if c.status != "scored":
                continue
            values = {k: getattr(c, k, None) for k in cols}
            for role, without in (("uq_faith", 1.0), ("uq_unfaith", 0.0)):  # the raw value from its signal
                if values[role] is None:
                    scorer = line.result.stack.to_dict()[role]
                    values[role] = without if scorer == "none" else _from_signal(scorer, c.signals)
            missing = [k for k, v in values.items() if v is None]
            if missing:
                raise InputError(f"{line.where}: claims[{i}]: {missing} missing; score with the verifier backend "
                                 "and a franq that records raw values")
            for k, v in values.items():
                cols[k].append(float(v))
    if not cols["p_faithful"]:
        raise InputError(f"{path}: no scored claims to estimate the base rate from")
    return ClaimInputs(cols["p_faithful"], cols["uq_faith"], cols["uq_unfaith"], p_contradicted=cols["p_contradicted"],
                       p_not_mentioned=cols["p_not_mentioned"])


def _from_signal(scorer_name: str, signals: dict) -> float | None:
    from franq import registry
    from franq.scorers.base import primary, probability_of

    scorer = registry.stack_scorer(scorer_name)
    value = signals.get(primary(scorer).name)
    return None if value is None else float(probability_of(scorer, [value])[0])


def estimate_prior(cal: ThreeConditionCalibrator | FranqCalibrator, X: ClaimInputs) -> tuple[float, int]:
    """The deployment share of true claims of the unlabelled claims ``X`` by EM: the fixed
    point of ``P' = mean P(true)`` with the calibrator moved to ``P'``, starting from the prior it
    moves from (:attr:`prior_anchor`). ``(estimate, iterations)``."""
    work = type(cal).from_dict(cal.to_dict())

    def predict_at(q: float) -> np.ndarray:
        work.prior = q
        return work.predict(X)

    return em_prior(predict_at, cal.prior_anchor)


def share_of_labels(is_true) -> dict:
    """The deployment's share of true claims read from labelled ones: ``(true + 1/2) / (n + 1)``
    (the mean under Jeffreys' prior: never 0 or 1, so a calibrator can move to it), with the 95%
    Wilson interval of the plain share. ``{"share", "n", "true", "interval"}``."""
    y = np.asarray(is_true, dtype=np.float64)
    n, k = len(y), float(y.sum())
    if not n:
        raise InputError("no labelled claims to read a share of true claims from")
    z, p = 1.959964, k / n
    centre, half = (p + z * z / (2 * n)), z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low, high = (float(np.clip((centre + sign * half) / (1 + z * z / n), 0.0, 1.0)) for sign in (-1, 1))
    return {"share": (k + 0.5) / (n + 1), "n": n, "true": round(k, 3), "interval": (round(low, 4), round(high, 4))}


def labelled_share(path: str | Path) -> dict:
    """:func:`share_of_labels` of the claims labelled ``is_true`` in ``path``: ``franq score``
    output with labels (what ``franq fit calibrator`` reads; any stack), or examples as franq
    reads them, unscored (``{"question", "passages", "answer", "claims": [{"text", "is_true"}]}``;
    a short answer's own ``is_true`` where it lists no claims)."""
    from franq.files import read_jsonl
    from franq.fit.training_claims import is_scored_record, read_scored, training_claims
    from franq.io import parse_example

    lines = read_jsonl(str(path), what="labelled file")
    first = next(lines, None)
    if first is not None and isinstance(first[1], dict) and is_scored_record(first[1]):
        return share_of_labels(training_claims(read_scored(path)).is_true)
    labels = []
    for n, obj in ([first] if first else []) + list(lines):
        ex = parse_example(obj, f"{path} line {n}")
        given = [c["is_true"] for c in ex.claim_labels or () if c.get("is_true") is not None]
        whole = (ex.labels or {}).get("is_true")
        labels += given or ([whole] if whole is not None and not ex.claim_labels else [])
    if not labels:
        raise InputError(f"{path}: no claims labelled 'is_true' (label claims with \"is_true\": true/false)")
    return share_of_labels(labels)


def adjust_prior(path: str | Path, output: str | Path, *, prior: float | None = None,
                 records: str | Path | None = None, labelled: str | Path | None = None) -> dict:
    """Write ``path``'s calibrator moved to base rate ``prior`` (or the share of the labelled
    claims in ``labelled``, or the EM estimate from the unlabelled ``records``) to ``output``;
    returns what was done."""
    from franq.calibrate import check_movable, load_calibrator, move_to_prior

    if sum(x is not None for x in (prior, records, labelled)) != 1:
        raise InputError("give one of --prior P, --from-labelled LABELLED.jsonl and --from-records SCORED.jsonl")
    cal = load_calibrator(path)
    check_movable(cal, path)
    out = {"fitted": round(cal.base_rate, 4), "was": cal.prior}
    if getattr(cal, "implied_prior_", None) is not None:
        out["implied"] = round(cal.implied_prior_, 4)
    if records is not None:
        X = scored_inputs(records, cal)
        prior, iterations = estimate_prior(cal, X)
        if at_bound(prior):
            raise InputError(f"{records}: EM found no share of true claims inside (0, 1) for these {len(X)} claims "
                             f"(it ran to {prior:g}): the calibrator's P(true) of them stays "
                             f"{'above' if prior > 0.5 else 'below'} every share it is moved to, which a change of "
                             "base rate alone does not explain; give the share with --prior")
        cal.prior = None
        out.update(estimated_from=str(records), n_claims=len(X), em_iterations=iterations,
                   mean_p_true_unadjusted=round(float(cal.predict(X).mean()), 4))
    if labelled is not None:
        read = labelled_share(labelled)
        prior = read["share"]
        out.update(labelled_from=str(labelled), n_labelled=read["n"], n_true=read["true"], interval=read["interval"])
    move_to_prior(cal, prior, path, "--prior")
    out.update(deployment=round(cal.prior, 4), logit_shift=round(cal.prior_shift(), 4),
               moves=cal.prior_rule, evaluation_dropped=cal.evaluation is not None)
    cal.evaluation = None  # measured at the fitted base rate: it no longer describes the moved maps
    cal.to_json(output)
    return out


EM_NOTICE = ("note: EM assumes that only the share of true claims changed; where the scores of a true (or a false) "
             "claim change with the deployment too, its estimate can be far off (nq-open's split claims under "
             "--fast: .974 for .087; benchmarks/results/fast.md). Check it against what you know, or give --prior.")
"""What ``franq fit prior --from-records`` prints under its result."""
EM_BOUND_NOTE = ("An EM estimate of 0.000 or 1.000 ran to its bound (calibration.prior.at_bound): no share inside (0, 1) "
                 "fits those claims, and `franq fit prior --from-records` refuses it.")
"""What a table of EM estimates says under it (benchmarks/bench_prior_shift.py, bench_calibration_natural.py)."""


LABELS_NOTE = ("note: a few labels give a share only as close as their number allows: moved to the share of 50 "
               "labelled claims (whole answers), the shipped long calibrator reached ECE <= .05 on natural ExpertQA "
               "in 86% of draws, with 200 in 96% (benchmarks/results/prior-shift.md). Label more where the interval "
               "is wide.")
"""What ``franq fit prior --from-labelled`` prints under its result."""


def format_prior(out: dict, output) -> str:
    how = "given"
    if "estimated_from" in out:
        how = (f"estimated by EM from {out['n_claims']} unlabelled claims of {out['estimated_from']} "
               f"({out['em_iterations']} iterations; their mean P(true) before: {out['mean_p_true_unadjusted']})")
    elif "labelled_from" in out:
        low, high = out["interval"]
        how = (f"the share of {out['n_labelled']} labelled claims of {out['labelled_from']}, {out['n_true']:g} true, "
               f"as (true + 1/2) / (n + 1); 95% interval {low:.3f}-{high:.3f}")
    implied = f", its P(true) there {out['implied']}" if "implied" in out else ""
    return (f"base rate {out['fitted']} (fitted{implied}) -> {out['deployment']} ({how}); moved as {out['moves']}, "
            f"logit_shift {out['logit_shift']:+.4f}; wrote {output}" + (
                " (without the source file's 'evaluation': it was measured at the fitted base rate)"
                if out.get("evaluation_dropped") else "") + (f"\n{EM_NOTICE}" if "estimated_from" in out else "")
            + (f"\n{LABELS_NOTE}" if "labelled_from" in out else ""))
