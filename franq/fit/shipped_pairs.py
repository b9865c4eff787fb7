"""The shipped verifier calibrators of the short presets that read given answers (issue
45.5): ``observer`` (the observer mix) and ``probe`` (semantic entropy probes, no samples),
each three-condition (soft variant) on the distractor pairs of nq-open train questions (the
gold answer, true, and a distractor passage's answer, false: answers the embedded model did
not write), the embedded model teacher-forcing each answer, the shipped verifier reading it
against the passages. :mod:`franq.fit.shipped` lists them; the long and short calibrators
are :mod:`franq.fit.shipped_verifier`."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from franq.fit.shipped_verifier import claim_inputs, verifier_backend


OBSERVER_NAME = "calibrator-short-observer-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json"
PROBE_NAME = "calibrator-probe-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json"
OBSERVER_TRAIN = 150
"""nq-open train questions whose distractor pairs fit the observer and probe presets' verifier calibrators."""
PAIR_PRESETS = {"observer": (OBSERVER_NAME, "observer mix answer_share / answer_consistency"),
                "probe": (PROBE_NAME, "semantic entropy probes se_probe / se_probe_closed (no samples)")}
"""The short presets calibrated on distractor pairs (given answers): each one's file and what it mixes."""


def pairs_scored(datasets: Path, raw, n: int, *, preset: str = "observer", split: str = "train", lm=None,
                 verifier=None):
    """The ``observer`` preset (the shipped observer mix) or the ``probe`` preset (semantic
    entropy probes, no samples) with the verifier backend on the distractor pairs of the first
    ``n`` clean nq-open questions of ``split`` (the gold answer, true, and a distractor
    passage's answer, false: answers the embedded model did not write). Each answer is
    teacher-forced by the embedded model. Returns ``(stack, claims, is_true)``."""
    from franq.config import FranqConfig
    from franq.evaluation.common import cached_sample_set
    from franq.fit.shipped_calibrators import OBSERVER_MIX, distractor_pairs
    from franq.io import Example
    from franq.pipeline import Franq

    pairs = distractor_pairs(datasets, raw, n, split)
    if lm is None:
        from franq.lm import CausalLM

        lm = CausalLM.load(device="cpu")
    uq = {"short_scoring": preset}
    if preset == "observer":
        uq["observer"] = {"faith": OBSERVER_MIX[0], "unfaith": OBSERVER_MIX[1], "extra": []}
    config = FranqConfig.from_dict({"mode": "short", "uq": uq, "calibration": {"calibrator": "none"}})
    fr = Franq(config, lm, faithfulness=verifier_backend(verifier))
    scores = fr.score_many([Example(it.question, it.passages, answer) for it, _, answer, _ in pairs],
                           sample_sets=[cached_sample_set(rec) if preset == "observer" else None
                                        for _, rec, _, _ in pairs])
    kept = [(s.claims[0], y) for s, (*_, y) in zip(scores, pairs) if s.claims and s.claims[0].status == "scored"]
    return fr.preset(preset).stack, [c for c, _ in kept], np.array([y for _, y in kept], dtype=float)


def pairs_inputs(datasets: Path, n: int, preset: str = "observer") -> dict[str, list[float]]:
    """The ``preset``'s calibrator's fit inputs for the distractor pairs of the first ``n``
    train questions, as :func:`pairs_verifier_calibrator` computes them: the embedded model
    teacher-forces each answer (the sample :mod:`franq.fit.shipped_inputs` records and checks)."""
    from franq.fit.shipped_inputs import as_record

    _, claims, y = pairs_scored(datasets, None, n, preset=preset)
    return as_record(claim_inputs(claims), y)


def pairs_verifier_calibrator(datasets: Path, out: Path, raw=None, *, preset: str = "observer", lm=None,
                              verifier=None, n: int = OBSERVER_TRAIN) -> Path:
    """The ``observer`` or ``probe`` preset's three-condition calibrator (soft variant) for the
    verifier stack, on the distractor pairs of the first ``n`` nq-open train questions."""
    from calibration.three_condition import ThreeConditionCalibrator

    stack, claims, y = pairs_scored(datasets, raw, n, preset=preset, lm=lm, verifier=verifier)
    cal = ThreeConditionCalibrator(variant="soft", fitted_for=dict(stack), description=(
        f"{preset} short-form calibrator for the verifier: {len(y)} answers of the distractor pairs of nq-open train "
        f"questions 1-{n} (the gold answer, true, vs a distractor passage's answer, false: answers the embedded model "
        f"did not write); {PAIR_PRESETS[preset][1]}"))
    cal.fit(claim_inputs(claims), y)
    path = out / PAIR_PRESETS[preset][0]
    cal.to_json(path)
    return path


def observer_verifier_calibrator(datasets: Path, out: Path, raw=None, **kw) -> Path:
    return pairs_verifier_calibrator(datasets, out, raw, preset="observer", **kw)


def probe_verifier_calibrator(datasets: Path, out: Path, raw=None, **kw) -> Path:
    return pairs_verifier_calibrator(datasets, out, raw, preset="probe", **kw)


OBSERVER_TEST = 100
"""nq-open test questions whose distractor pairs check the observer and probe calibrators (held out)."""


def evaluate_pairs(datasets: Path, path: Path, raw=None, *, lm=None, verifier=None, n: int = OBSERVER_TEST) -> str:
    """ECE, Brier (and a constant's), AUROC of the observer or probe verifier calibrator at
    ``path`` (its preset read from the file) and of the raw three-condition mix, on the
    distractor pairs of the first ``n`` nq-open test questions (answers the embedded model did
    not write; half true by construction), with the ECE floor (what a calibrated P(true) with
    the same values shows on this many answers)."""
    from calibration.contract import ClaimInputs
    from calibration.metrics import brier_score, ece_floor, expected_calibration_error
    from calibration.three_condition import ThreeConditionCalibrator
    from franq.evaluation.common import auroc

    cal = ThreeConditionCalibrator.from_json(path)
    preset = cal.fitted_for["mode"]
    _, claims, y = pairs_scored(datasets, raw, n, preset=preset, split="test", lm=lm, verifier=verifier)
    col = {k: np.array([getattr(c, k) for c in claims], dtype=float)
           for k in ("p_faithful", "p_contradicted", "p_not_mentioned", "uq_faith", "uq_unfaith")}
    p = cal.predict(ClaimInputs(col["p_faithful"], col["uq_faith"], col["uq_unfaith"],
                                p_contradicted=col["p_contradicted"], p_not_mentioned=col["p_not_mentioned"]))
    raw3 = (col["p_faithful"] + col["p_contradicted"]) * col["uq_faith"] + col["p_not_mentioned"] * col["uq_unfaith"]
    rows = ["| P(true) | answers (true) | ECE | ECE floor, median (95th pct) | Brier | constant Brier | AUROC |",
            "|---|---|---|---|---|---|---|"]
    for name, q in (("calibrated", p), ("raw three-condition mix", raw3), ("1 - P_contradicted", 1 - col["p_contradicted"])):
        floor = ece_floor(q)
        rows.append(f"| {name} | {len(y)} ({int(y.sum())}) | {expected_calibration_error(q, y):.3f} | "
                    f"{floor[0]:.3f} ({floor[1]:.3f}) | {brier_score(q, y):.3f} | {y.mean() * (1 - y.mean()):.3f} | "
                    f"{auroc(q, y):.3f} |")
    return "\n".join([f"nq-open test questions 1-{n}, distractor pairs ({preset} preset, {path.name})", "", *rows, "",
                      "Map floors / ceilings: " + ", ".join(
                          f"{k} {float(np.min(m.y_thresholds_)):.3f}-{float(np.max(m.y_thresholds_)):.3f}"
                          for k, m in (("T_s", cal.uq_supported_), ("T_c", cal.uq_contradicted_),
                                       ("T_n", cal.uq_not_mentioned_))), ""])
