"""The shipped three-condition calibrators (issue 25): FRANQ with the verifier as the
faithfulness backend, P(true) = P_s * T_s + P_c * T_c + P_n * T_n, fitted from the
committed data (:mod:`franq.fit.generations`) and the verifier shipped in
``franq/data/verifier`` (or the one given). :mod:`franq.fit.shipped` lists them once the
verifier is shipped.

    long    the 120-answer ExpertQA calibration sample and its answers with one true claim
            contradicted: UQ values from the committed long-form snapshots (they do not
            depend on the faithfulness backend), P_s, P_c, P_n from the verifier over each
            answer's passages; gold conditions from the data, never from the verifier
            (:func:`long_conditions`), and for T_n each contradicted claim and its original
            also as not mentioned (:func:`not_mentioned_pairs`); condition variant, isotonic maps
    short   the attempted greedy answers of the 300 committed nq-open train questions
            (clean and corrupted passage lists): the short preset on the committed samples,
            the verifier on (question + answer) against the passages; soft variant (no gold
            condition labels)

Each file's description states its sources and their shares. Only text is read by the
verifier: no causal-LM pass runs.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from franq.fit.natural import long_evaluation
from franq.fit.shipped_calibrators import LONG_STACK, SHORT_TRAIN, calibration_sample
from franq.lm.load import EMBEDDED_NAME

LONG_NAME = "calibrator-long-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json"
SHORT_NAME = "calibrator-short-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json"


def verifier_backend(verifier: str | Path | None = None):
    """The verifier faithfulness backend on ``verifier`` (default: the shipped one)."""
    from franq.faithfulness.verifier import VerifierFaithfulness

    return VerifierFaithfulness(verifier)


def verifier_installed() -> bool:
    from franq.verifier.model import shipped_verifier_dir

    return (shipped_verifier_dir() / "card.json").is_file()


def long_verifier_lines(datasets: Path, backend, records: list[dict] | None = None) -> list:
    """The committed long-form results of ``records`` (default: the calibration sample)
    with P_s, P_c, P_n and the evidence window of ``backend`` in place of combined-v1's
    P_faithful, under the stack of that backend."""
    from franq.fit.generations import long_scored
    from franq.io import parse_passages

    records = calibration_sample(datasets) if records is None else records
    lines = long_scored(datasets, records, LONG_STACK)
    return with_conditions(lines, [parse_passages(rec["passages"]) for rec in records], backend)


def with_conditions(lines: list, passages: list, backend) -> list:
    """``lines`` (ResultLines) with ``backend``'s P_s, P_c, P_n and evidence window in place
    of their P_faithful, under the long stack of that backend."""
    from franq.faithfulness.base import text_pairs
    from franq.results import ResultLine
    from franq.stages.record import ClaimEvidence
    from franq.types import Stack

    stack = Stack.from_dict({**LONG_STACK, "faithfulness": backend.name})
    evidence = []
    for ps, line in zip(passages, lines):
        for c in line.result.claims:
            if c.status == "scored":
                evidence.append(ClaimEvidence.of(c.claim, question=line.result.question, passages=ps,
                                                 answer=line.result.answer))
    cond = backend.predict_conditions(text_pairs(evidence), evidence)
    k, out = 0, []
    for line in lines:
        claims = []
        for c in line.result.claims:
            if c.status == "scored":
                p_s = float(cond.p_supported[k])
                c = dataclasses.replace(c, p_faithful=p_s, p_contradicted=float(cond.p_contradicted[k]),
                                        p_not_mentioned=float(cond.p_not_mentioned[k]), evidence_window=cond.windows[k])
                k += 1
            claims.append(c)
        result = dataclasses.replace(line.result, claims=tuple(claims), stack=stack)
        out.append(ResultLine(line.where, line.id, result, line.example))
    return out


CONTRADICTED = "long-expertqa-contradicted.embedded-SmolLM2-135M-Instruct.Q4-1.jsonl.gz"
"""The calibration sample's answers with one true claim contradicted (franq.fit.shipped_contradictions),
scored by ``franq score`` with the embedded model (committed in datasets/generations)."""


TEST_CONTRADICTED = "long-expertqa-test-contradicted.embedded-SmolLM2-135M-Instruct.Q4-1.jsonl.gz"
"""The same for the ExpertQA rand_test answers (held out: the calibrators' check, never fitted on)."""


def contradicted_lines(datasets: Path, backend, name: str = CONTRADICTED, *, limit: int | None = None) -> list:
    """The committed scored contradicted answers (``name`` in datasets/generations; the
    first ``limit`` of them) with ``backend``'s conditions."""
    import gzip

    from franq.results import read_results

    with gzip.open(datasets / "generations" / name, "rt", encoding="utf-8") as f:
        lines = list(read_results(f, with_input=True))[:limit]
    return with_conditions(lines, [line.example.passages for line in lines], backend)


LONG_FLAT: tuple[str, ...] = ()
"""Conditions whose map the shipped long calibrator flattens (their share of true claims):
none. T_c is fitted on the corrupted claims alone, all false: constant 0. A flat T_n (.84)
was measured beside the isotonic one and ranks held-out ExpertQA no better (.539 / .618 vs
.540 / .621; benchmarks/results/three-condition-long.md): not shipped."""


def long_conditions(real, n_contradicted: int) -> list[str | None]:
    """The gold condition of each long calibration claim, from the data: ``supported``
    where ExpertQA's annotators found the claim supported by its passages, ``not_mentioned``
    where they did not (ExpertQA labels support, not contradiction: a true unsupported claim
    is one its passages do not state), None where they gave no support label (left out of
    the fit), ``contradicted`` for the ``n_contradicted`` claims corrupted by a typed
    substitution (their passages state the original). Never the verifier's own call: a T_c
    fitted on the claims the verifier calls contradicted learns the verifier's mistakes (on
    ExpertQA, half of them true claims) and keeps real contradictions "likely true"."""
    return [None if g is None else "supported" if g else "not_mentioned" for g in real.is_faithful] + \
        ["contradicted"] * n_contradicted


LONG_NOT_MENTIONED_PAIRS = True
"""Whether the shipped long calibrator's T_n also fits on :func:`not_mentioned_pairs`: yes
since 2026-11-27, by a criterion written before its held-out run
(benchmarks/results/long-calibrator-pairs.md): with v7, held-out ExpertQA AUROC .545 vs .543
(.656 vs .638 with the contradicted answers), 59 of 199 contradicted claims below 0.5 (50),
T_n's floor .480 (.667)."""


def not_mentioned_pairs(real, real_claims, contra, contra_claims):
    """Each corrupted claim of ``contra`` whose original is in ``real``, and that original
    (a true claim), both as not mentioned: what passages without the original's supporting
    sentence would say of either. T_n maps UQ_unfaith, p(c | x) without passages, which the
    passages do not change, so both keep their scored values; half true, half false, the
    pairs add to T_n how well the model's own knowledge tells a fact from its corruption
    (ExpertQA's unsupported claims, written by GPT-4, are mostly true). Returns the
    ``TrainingClaims`` of the originals and of their corrupted claims."""
    from franq.fit.training_claims import claim_keys
    from franq.fit.shipped_contradictions import contradicted_id

    real_keys = claim_keys(real)
    origin = {contradicted_id(rid): rid for rid, _ in real_keys}
    made_from = [(origin.get(cid), i) for cid, i in claim_keys(contra)]
    corrupted = np.array([rid is not None for rid, _ in made_from], dtype=bool)
    wanted = set(made_from)
    originals = np.array([key in wanted for key in real_keys], dtype=bool)
    if originals.sum() != corrupted.sum():
        raise ValueError(f"not_mentioned_pairs: {int(originals.sum())} originals for {int(corrupted.sum())} "
                         "corrupted claims (a corrupted claim's original must be a labelled claim of its answer)")
    return real_claims.subset(originals), contra_claims.subset(corrupted)


def long_verifier_calibrator(datasets: Path, out: Path, raw=None, *, verifier: str | Path | None = None,
                             flat: tuple[str, ...] = LONG_FLAT, pairs: bool = LONG_NOT_MENTIONED_PAIRS) -> Path:
    from franq.fit.calibrator import fit_three_condition_calibrator
    from franq.fit.training_claims import TrainingClaims, training_claims

    backend = verifier_backend(verifier)
    real = long_verifier_lines(datasets, backend)
    real_claims = training_claims(real)
    n_real = len(real_claims)
    contra = contradicted_lines(datasets, backend)
    contra_claims = training_claims(contra)
    data = TrainingClaims.join([real_claims, contra_claims])
    conditions = long_conditions(real_claims, len(contra_claims))
    known = np.array([c is not None for c in conditions])
    data, conditions = data.subset(known), [c for c in conditions if c is not None]
    n_supported, n_not = conditions.count("supported"), conditions.count("not_mentioned")
    n_contra = len(data) - n_supported - n_not
    natural = np.arange(len(data)) < n_supported + n_not  # the ranking check reads these, not corruptions
    n_pairs = 0
    if pairs:
        originals, corrupted = not_mentioned_pairs(real, real_claims, contra, contra_claims)
        n_pairs = len(corrupted)
        data = TrainingClaims.join([data, originals, corrupted])
        conditions += ["not_mentioned"] * (2 * n_pairs)
        natural = np.concatenate([natural, np.zeros(2 * n_pairs, dtype=bool)])
    about = (f"ExpertQA train calibration sample: {n_supported + n_not} claims with truth and support labels "
             f"({(n_supported + n_not) / len(data):.0%}; condition from the annotators' support label: supported "
             f"{n_supported}, not mentioned {n_not}; {n_real - n_supported - n_not} without a support label left out) "
             f"and {n_contra} of its true claims contradicted by a typed substitution in the answer "
             f"({n_contra / len(data):.0%}; false, contradicted)"
             + (f"; the same {n_pairs} corrupted claims and the {n_pairs} true claims they were made from, "
                f"each also as not mentioned (as against passages without the original's supporting sentence; "
                f"{2 * n_pairs / len(data):.0%}, half false)" if pairs else "")
             + f"; UQ values from datasets/generations/long-expertqa.* and {CONTRADICTED}, "
               f"P_s/P_c/P_n from {backend.name}")
    cal, _ = fit_three_condition_calibrator(data, variant="condition", conditions=conditions, flat=flat,
                                            natural=natural, description=f"three-condition long-form calibrator "
                                                                         f"(condition variant{_flat(flat)}): {about}")
    cal.evaluation = long_evaluation(cal, datasets, verifier)  # held-apart natural dev sets (issue 45.1)
    path = out / LONG_NAME
    cal.to_json(path)
    return path


def long_inputs(datasets: Path, n: int) -> dict[str, list[float]]:
    """The fit inputs of the long calibrator, as :func:`long_verifier_calibrator` computes
    them, for the first ``n`` answers of the calibration sample and of its contradicted copies
    (the sample :mod:`franq.fit.shipped_inputs` records and checks)."""
    from franq.fit.training_claims import TrainingClaims, training_claims
    from franq.fit.shipped_inputs import as_record

    backend = verifier_backend()
    data = TrainingClaims.join([training_claims(long_verifier_lines(datasets, backend, calibration_sample(datasets)[:n])),
                                training_claims(contradicted_lines(datasets, backend, limit=n))])
    return as_record(data.inputs(), data.is_true)


def _flat(flat) -> str:
    return f"; flat map (share of true claims) for {', '.join(flat)}" if flat else ""


def short_verifier_results(datasets: Path, backend, n: int = SHORT_TRAIN, *, split: str = "train"):
    """The short preset with ``backend`` on the committed nq-open samples of ``split``: per
    attempted greedy answer, ``(variant, AnswerScore, is_true)``."""
    from franq.config import FranqConfig
    from franq.evaluation.common import NamedModel, attempted, cached_sample_set, is_correct
    from franq.fit.generations import short_observed
    from franq.io import Example
    from franq.pipeline import Franq

    config = FranqConfig.from_dict({"mode": "short", "calibration": {"calibrator": "none"}})
    fr = Franq(config, NamedModel(EMBEDDED_NAME), faithfulness=backend)
    rows, _ = short_observed(datasets, EMBEDDED_NAME, split, n)
    kept = [(it, rec, v) for it, rec, v in rows if attempted(rec["greedy"]["text"]) and "p_true_logprobs" in rec]
    scores = fr.score_many([Example(it.question, it.passages, rec["greedy"]["text"]) for it, rec, _ in kept],
                           sample_sets=[cached_sample_set(rec) for _, rec, _ in kept], generated=True)
    return fr.preset("short").stack, [(v, s, bool(is_correct(rec["greedy"]["text"], it.answers)))
                                      for (it, rec, v), s in zip(kept, scores)]


def _short_claims(rows) -> list[tuple]:
    """``(variant, ClaimScore, is_true)`` of the scored answers of :func:`short_verifier_results`."""
    return [(v, s.claims[0], y) for v, s, y in rows if s.claims and s.claims[0].status == "scored"]


def claim_inputs(claims):
    """What a three-condition calibrator reads of scored claims (``ClaimScore``s)."""
    from calibration.contract import ClaimInputs

    return ClaimInputs([c.p_faithful for c in claims], [c.uq_faith for c in claims], [c.uq_unfaith for c in claims],
                       p_contradicted=[c.p_contradicted for c in claims],
                       p_not_mentioned=[c.p_not_mentioned for c in claims])


def short_verifier_calibrator(datasets: Path, out: Path, raw=None, *, verifier: str | Path | None = None,
                              n: int = SHORT_TRAIN) -> Path:
    from calibration.three_condition import ThreeConditionCalibrator

    stack, rows = short_verifier_results(datasets, verifier_backend(verifier), n)
    claims = _short_claims(rows)
    shares = {v: sum(x[0] == v for x in claims) for v in ("clean", "corrupted")}
    cal = ThreeConditionCalibrator(variant="soft", fitted_for=dict(stack), description=(
        f"three-condition short-form calibrator: {len(claims)} attempted greedy answers of {n} nq-open train "
        f"questions (clean passage lists {shares['clean']}, corrupted {shares['corrupted']}); labels: normalized "
        "match; the short preset on datasets/generations/short-nq-open.*"))
    cal.fit(claim_inputs([c for _, c, _ in claims]), [y for _, _, y in claims])
    path = out / SHORT_NAME
    cal.to_json(path)
    return path


def short_inputs(datasets: Path, n: int) -> dict[str, list[float]]:
    """The fit inputs of the short calibrator, as :func:`short_verifier_calibrator` computes
    them, for the first ``n`` nq-open train questions (the sample :mod:`franq.fit.shipped_inputs`
    records and checks)."""
    from franq.fit.shipped_inputs import as_record

    claims = _short_claims(short_verifier_results(datasets, verifier_backend(), n)[1])
    return as_record(claim_inputs([c for _, c, _ in claims]), [y for _, _, y in claims])


CONDITIONS_ONLY: tuple[str, ...] = ("supported", "contradicted", "not_mentioned")
"""``flat`` for the conditions-only refit: every map constant, P(true) from the verifier's
P_s, P_c, P_n alone. With v7 the embedded model's UQ terms rank natural ExpertQA claims at
chance or below (AUROC of UQ_faith .47, of UQ_unfaith .44 on rand_test), so isotonic maps of
them fit noise; this refit measured best on the natural dev sets (rand_test ECE .044, AUROC
.606) but puts every contradicted claim above .5, so it is not shipped
(experiments/2026-11-28-long-calibrator-natural)."""


def long_soft_calibrator(datasets: Path, out: Path, raw=None, *, verifier: str | Path | None = None,
                         flat: tuple[str, ...] = ()) -> Path:
    """The long-form three-condition calibrator refitted for natural answers (issue 45 item 1):
    soft variant (every claim in the three maps, weighted by the verifier's P_s, P_c, P_n, so
    T_c learns how often the claims the verifier finds contradicted are true) on the
    calibration sample and its contradicted copies (17% of the claims), then moved to the
    natural share of true claims of the sample (:mod:`calibration.prior`): the corruptions
    shape the maps, the natural answers set the base rate; the maps in ``flat`` constant
    (:data:`CONDITIONS_ONLY`: all three). Written under :data:`LONG_NAME`. Measured:
    benchmarks/results/calibration-natural.md."""
    from franq.fit.training_claims import training_claims

    backend = verifier_backend(verifier)
    real = training_claims(long_verifier_lines(datasets, backend))
    contra = training_claims(contradicted_lines(datasets, backend))
    cal = long_soft_fit(real, contra, backend.name, dict(real.stack), flat=flat)
    path = out / LONG_NAME
    cal.to_json(path)
    return path


def long_soft_fit(real, contra, verifier_name: str, fitted_for: dict, *, flat: tuple[str, ...] = ()):
    """:func:`long_soft_calibrator`'s fit on its claims (``TrainingClaims`` of the natural
    sample and of its contradicted copies), unsaved."""
    from calibration.three_condition import ThreeConditionCalibrator
    from franq.fit.training_claims import TrainingClaims

    data = TrainingClaims.join([real, contra])
    natural = float(real.is_true.mean())
    cal = ThreeConditionCalibrator(variant="soft", prior=natural, flat=flat, fitted_for=fitted_for, description=(
        f"three-condition long-form calibrator (soft variant{_flat(flat)}): ExpertQA train calibration sample, "
        f"{len(real)} claims with truth labels ({natural:.1%} true), and {len(contra)} of its true claims "
        f"contradicted by a typed substitution in the answer ({len(contra) / len(data):.0%} of the claims; false); "
        f"maps moved to the natural share {natural:.4f}; UQ values from datasets/generations/long-expertqa.* and "
        f"{CONTRADICTED}, P_s/P_c/P_n from {verifier_name}"))
    return cal.fit(data.inputs(), data.is_true)
