"""Rebuild the shipped calibrators and the context-PMI map from the committed data
(:mod:`franq.fit.generations`); :mod:`franq.fit.shipped` lists them. Each function writes
one file into ``out`` and returns its path; the probe-preset calibrator is in
:mod:`franq.fit.shipped_probes` (it needs the probes' passes)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from calibration.contract import ClaimInputs
from calibration.franq import FranqCalibrator
from franq.calibrate import stack_key
from franq.lm.load import EMBEDDED_NAME

LONG_STACK = stack_key(model=EMBEDDED_NAME, faithfulness="combined-v1", uq_faith="claim_prob",
                       uq_unfaith="parametric", mode="long")
"""The long-form default stack the long calibrator and the context-PMI map are fitted for."""
CALIBRATION_SAMPLE = 120
"""ExpertQA train answers in the seeded calibration sample (``random.Random(0)`` shuffle)."""
OBSERVER_TRAIN = 45
"""nq-open train questions of the observer calibrator (``franq bench observer --n-train 45 --fit``)."""
OBSERVER_MIX = ("answer_share", "answer_consistency")
"""The observer mix chosen on train by 5-fold CV (benchmarks/results/observer-short.md)."""
SHORT_TRAIN = 300
"""nq-open train questions of the short-form calibrator (all committed)."""


def calibrator_name(mode: str, stack: dict[str, str]) -> str:
    from franq.evaluation.common import slug

    return f"calibrator-{mode}-{slug(stack['model'])}-{slug(stack['faithfulness'])}.json"


def calibration_sample(datasets: Path) -> list[dict]:
    from franq.fit.generations import seeded_sample

    return seeded_sample(datasets / "expertqa" / "train.jsonl", CALIBRATION_SAMPLE, seed=0)


def _long_claims(datasets: Path, n: int | None = None):
    """The labelled claims of the first ``n`` (all) answers of the calibration sample, scored
    values from the committed long-form generations."""
    from franq.fit.generations import long_scored
    from franq.fit.training_claims import training_claims

    return training_claims(long_scored(datasets, calibration_sample(datasets)[:n], LONG_STACK))


def long_calibrator(datasets: Path, out: Path, raw=None) -> Path:
    """The long-form default calibrator (condition variant) on the 120-answer calibration
    sample, scored values from the committed long-form generations."""
    from franq.fit.calibrator import fit_franq_calibrator

    data = _long_claims(datasets)
    cal, _ = fit_franq_calibrator(data, variant="condition", description=(
        "default: fitted by scripts/fit_default_calibrator.py on expertqa-train-sample120.embedded-combined.jsonl "
        f"({len(data)} labelled claims)"))
    path = out / calibrator_name("long", LONG_STACK)
    cal.to_json(path)
    return path


def long_inputs(datasets: Path, n: int) -> dict[str, list[float]]:
    """:func:`long_calibrator`'s fit inputs for the first ``n`` answers (the sample
    :mod:`franq.fit.shipped_inputs` records and checks)."""
    from franq.fit.shipped_inputs import as_record

    data = _long_claims(datasets, n)
    return as_record(data.inputs(), data.is_true)


def context_pmi_map(datasets: Path, out: Path, raw=None) -> Path:
    """The context-PMI map on the labelled claims of the calibration sample, pass features
    from the committed long-form generations."""
    from franq.faithfulness.features import pass_features_from_sums
    from franq.fit.faithfulness_map import PMI_FEATURES, fit_map, labelled_claims
    from franq.fit.generations import long_scored

    records = calibration_sample(datasets)
    passes = {}
    for line in long_scored(datasets, records, LONG_STACK):
        for i, c in enumerate(line.result.claims):
            s = c.signals
            if c.status == "scored" and "log_parametric" in s:
                passes[(line.id, i)] = pass_features_from_sums(s["log_claim_prob"], s["log_parametric"],
                                                               s["n_tokens"])
    claims = [c for c in labelled_claims(records, passes) if c.passes is not None]
    fitted = fit_map(PMI_FEATURES, claims, name="context-pmi-v1", data=(
        "ExpertQA train, seeded sample of 120 answers (benchmarks/cache/expertqa-train-sample120.jsonl)"))
    path = out / "faithfulness-context-pmi.json"
    fitted.to_json(path)
    return path


def combined_map(datasets: Path, out: Path, raw=None) -> Path:
    """combined-v1: the text features of every labelled ExpertQA train claim."""
    from franq.fit.faithfulness_map import TEXT_FEATURES, fit_map, load_claims

    fitted = fit_map(TEXT_FEATURES, load_claims(datasets / "expertqa" / "train.jsonl"), name="combined-v1",
                     data="ExpertQA rand_val + domain_val (datasets/expertqa/train.jsonl)")
    path = out / "faithfulness-combined.json"
    fitted.to_json(path)
    return path


def _short_franq(uq: dict | None = None, lm=None):
    """The short preset over cached samples (no model unless ``lm`` is given): the pipeline
    and its faithfulness backend."""
    from franq.config import FranqConfig
    from franq.evaluation.common import NamedModel
    from franq.faithfulness.combined import CombinedFaithfulness
    from franq.pipeline import Franq

    faith = CombinedFaithfulness(lm_name=EMBEDDED_NAME)
    config = FranqConfig.from_dict({"mode": "short", "uq": uq or {}, "calibration": {"calibrator": "none"}})
    return Franq(config, lm or NamedModel(EMBEDDED_NAME), faithfulness=faith), faith


def _short_units(datasets: Path, n: int):
    """``(stack, units)``: the short preset on the committed samples of the first ``n`` nq-open
    train questions, its attempted greedy answers."""
    from franq.evaluation.common import short_units
    from franq.fit.generations import short_observed

    fr, faith = _short_franq()
    rows, _ = short_observed(datasets, EMBEDDED_NAME, "train", n)
    units, _ = short_units([it for it, _, _ in rows], [r for _, r, _ in rows], model_name=EMBEDDED_NAME,
                           faithfulness=faith)
    return fr.preset("short").stack, units


def short_inputs(datasets: Path, n: int) -> dict[str, list[float]]:
    """:func:`short_calibrator`'s fit inputs for the first ``n`` questions (the sample
    :mod:`franq.fit.shipped_inputs` records and checks)."""
    from franq.evaluation.common import SHORT
    from franq.fit.shipped_inputs import as_record

    _, units = _short_units(datasets, n)
    return as_record(ClaimInputs(*SHORT.franq_inputs(units)), units.is_true)


def short_calibrator(datasets: Path, out: Path, raw=None) -> Path:
    """The in-policy short-form calibrator on the attempted greedy answers of all 300
    committed nq-open train questions (clean and corrupted passage lists): the short preset
    on the committed samples, labels = normalized match of the greedy answer."""
    from franq.evaluation.common import SHORT

    stack, units = _short_units(datasets, SHORT_TRAIN)
    cal = FranqCalibrator(variant="condition", fitted_for=stack, description=(
        f"default short-form calibrator: fitted by scripts/fit_short_calibrator.py on the nq-open train split "
        f"({len(units)} attempted answers from datasets/generations; labels: normalized match of the greedy answer)"))
    cal.fit(ClaimInputs(*SHORT.franq_inputs(units)), units.is_true)
    path = out / calibrator_name("short", stack)
    cal.to_json(path)
    return path


def distractor_pairs(datasets: Path, raw, n: int, split: str = "train") -> list[tuple]:
    """``(item, record, answer, is_true)`` for the first ``n`` clean nq-open questions of ``split``:
    the first gold answer (true) and a distractor passage's answer (false): the gold answer
    of the question whose gold passage is this question's first distractor (in passage
    order) whose answer does not match this question's gold. Passage owners come from
    datasets/nq-open/passage-answers.json.gz (``raw``, the raw nq-open file, only without it)."""
    from franq.evaluation.common import is_correct, passage_answers
    from franq.fit.generations import read_jsonl, short_observed

    owners = passage_answers(datasets / "nq-open", raw)
    gold_ids = {r["id"]: r["passage_ids"][r["gold_position"]] for r in read_jsonl(datasets / "nq-open" / f"{split}.jsonl")}
    rows, _ = short_observed(datasets, EMBEDDED_NAME, split, n, ("clean",))
    out = []
    for it, rec, _ in rows:
        gold = it.answers[0]
        wrong = next((a[0] for pid in it.passage_ids if pid != gold_ids[it.id] and (a := owners.get(pid))
                      and not is_correct(a[0], it.answers) and not is_correct(gold, a)), None)
        if wrong is not None:
            out += [(it, rec, gold, 1), (it, rec, wrong, 0)]
    return out


def observer_calibrator(datasets: Path, out: Path, raw: Path | None = None, *, lm=None) -> Path:
    """The observer short-form calibrator on the distractor pairs of the first 45 nq-open
    train questions (each distractor passage's answer from datasets/nq-open/passage-answers.json.gz). Observer
    scoring teacher-forces each answer after the prompt: the embedded model runs (about a
    minute on CPU)."""
    from franq.evaluation.common import cached_sample_set
    from franq.io import Example

    pairs = distractor_pairs(datasets, raw, OBSERVER_TRAIN)
    uq = {"short_scoring": "observer", "observer": {"faith": OBSERVER_MIX[0], "unfaith": OBSERVER_MIX[1], "extra": []}}
    if lm is None:
        from franq.lm import CausalLM

        lm = CausalLM.load(device="cpu")
    fr, _ = _short_franq(uq=uq, lm=lm)
    stack = fr.preset("observer").stack
    scores = fr.score_many([Example(it.question, it.passages, answer) for it, _, answer, _ in pairs],
                           sample_sets=[cached_sample_set(rec) for _, rec, _, _ in pairs])
    x = np.array([[s.claims[0].p_faithful, *(s.claims[0].signals[f"p_{name}"] for name in OBSERVER_MIX)]
                  for s in scores], dtype=np.float64)
    # the description the shipped file carries (the script is now `franq bench observer`): kept, bit-identical
    cal = FranqCalibrator(variant="condition", fitted_for=stack, description=(
        f"observer short-form calibrator: fitted by scripts/bench_observer.py --fit on nq-open train questions "
        f"1-{OBSERVER_TRAIN} ({len(pairs)} answers: the gold answer vs a distractor passage's answer, per question)"))
    cal.fit(ClaimInputs(*x.T), np.array([p[3] for p in pairs]))
    path = out / calibrator_name("short-observer", stack)
    cal.to_json(path)
    return path


SHORT_TEST = 200
"""nq-open test questions of the short calibrator's evaluation (the benchmark's units)."""


def evaluate_short_calibrator(datasets: Path, path: Path) -> str:
    """AUROC, PR-AUC of false answers and ECE of the short-form calibrator at ``path`` on
    the first 200 nq-open test questions (clean and corrupted lists), against the raw mix:
    the table of benchmarks/results/short-calibrator.md."""
    from franq.calibrate import load_calibrator
    from franq.evaluation.common import SHORT, auroc, ece, load_nq_open, pr_auc, short_key, short_units, slug
    from franq.evidence.samples import SamplingOptions
    from franq.fit.generations import snapshot

    cal = load_calibrator(path)
    _, faith = _short_franq()
    cache = snapshot(datasets, f"short-nq-open.{slug(EMBEDDED_NAME)}.jsonl")
    rows = ["| test variant | answers | true | AUROC cal. | AUROC raw | PR-AUC false cal. | ECE cal. | ECE raw | "
            "P(true) cal. range |", "|---|---|---|---|---|---|---|---|---|"]
    for variant in ("clean", "corrupted"):
        pairs = [(it, cache[k]) for it in load_nq_open(datasets / "nq-open", "test", variant, limit=SHORT_TEST)
                 if (k := short_key(it.id, it.passage_ids, SamplingOptions())) in cache]
        u, _ = short_units([it for it, _ in pairs], [r for _, r in pairs], model_name=EMBEDDED_NAME,
                           faithfulness=faith)
        p = cal.predict(ClaimInputs(*SHORT.franq_inputs(u)))
        raw, y = SHORT.franq_none(u), u.is_true
        rows.append(f"| {variant} | {len(u)} | {int(y.sum())} | {auroc(p, y):.3f} | {auroc(raw, y):.3f} | "
                    f"{pr_auc(p, y):.3f} | {ece(p, y):.3f} | {ece(raw, y):.3f} | {p.min():.3f}-{p.max():.3f} |")
    return "\n".join(rows)
