"""Held-out checks of the shipped three-condition calibrators (issue 25's targets), from the
committed generations and the shipped verifier (no causal-LM pass):

long    ExpertQA rand_test (the 205 answers no fit has seen:
        franq.evaluation.data.expertqa_held_out): AUROC of P(true) for the truth labels,
        calibrated vs the raw three-condition mix vs the binary raw mix; the floors (lowest
        values) of the calibrator's maps.
short   nq-open test questions with the gold passage in the list (clean) and with it
        replaced (corrupted): the same AUROCs, and how many wrong answers the verifier finds
        contradicted by the passages get P(true) < 0.5.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from calibration.contract import ClaimInputs
from franq.evaluation.common import auroc, bootstrap


def _auc(p, y) -> str:
    y = np.asarray(y, dtype=int)
    return f"{auroc(np.asarray(p, dtype=float), y):.3f}" if 0 < y.sum() < len(y) else "n/a"


def _auc_gain(a, b, y, groups=None) -> str:
    """AUROC(a) - AUROC(b) on the same items with a paired 95% bootstrap interval (1,000
    resamples, of ``groups`` when given: an answer's claims together; those with one class
    only dropped): whether a ranking difference is more than the noise of a few positives."""
    y = np.asarray(y, dtype=int)
    if not 0 < y.sum() < len(y):
        return "n/a"
    point, lo, hi = bootstrap(lambda p, q, t: auroc(p, t) - auroc(q, t), np.asarray(a, dtype=float),
                              np.asarray(b, dtype=float), y, groups=None if groups is None else list(groups))
    return f"{point:+.3f} [{lo:+.3f}, {hi:+.3f}]"


def _item(rec: dict, claim: str) -> tuple[list[str], str]:
    """``(passage texts, claim)`` of a franq record, the claim's citation markers stripped."""
    from franq.fit.verifier.data import CITATION_RE

    return [p["text"] for p in rec["passages"]], CITATION_RE.sub("", claim).strip()


def claim_items(source: Path | list[dict], n: int | None = None, seed: int = 0):
    """The labelled claims of a claims file (datasets/wice/heldout.jsonl) or of records
    (:func:`~franq.evaluation.data.expertqa_held_out`), citation markers stripped, all in
    file order or a fixed random sample of ``n``: ``(items, titles, y)`` with items
    ``(passage texts, claim)``, titles the passages' titles, y 1 where the claim is
    supported. What the verifier benchmarks read."""
    import random

    from franq.fit.generations import read_jsonl

    items, titles, y = [], [], []
    for rec in source if isinstance(source, list) else read_jsonl(source):
        for c in rec["claims"]:
            if c.get("is_faithful") is not None:
                items.append(_item(rec, c["text"]))
                titles.append([p.get("title") or "" for p in rec["passages"]])
                y.append(int(bool(c["is_faithful"])))
    keep = range(len(y)) if n is None else sorted(random.Random(seed).sample(range(len(y)), min(n, len(y))))
    return [items[k] for k in keep], [titles[k] for k in keep], np.array([y[k] for k in keep])


def long_evidence_sets(datasets: Path) -> dict:
    """The verifier benchmarks' long-evidence sets, each ``(items, y)`` as :func:`claim_items`
    gives them: WiCE held out (144 claims), 400 ExpertQA rand_test claims (seed 0) of the
    answers no fit has seen, and the claims of those answers with one true claim
    contradicted by a typed substitution (franq.fit.shipped_contradictions; all y 0; 199:
    the corruption is drawn over all 217 answers, as the committed generations were, and
    the 12 answers that are also in train are then left out)."""
    from franq.evaluation.common import expertqa_held_out
    from franq.fit.generations import read_jsonl
    from franq.fit.shipped_contradictions import corrupted_records

    wice_items, _, wice_y = claim_items(datasets / "wice" / "heldout.jsonl")
    eqa_items, _, eqa_y = claim_items(expertqa_held_out(datasets), 400)
    seen = _seen_contradicted(datasets)
    contra = []
    for rec in corrupted_records(read_jsonl(datasets / "expertqa" / "test.jsonl")):
        if rec["id"] not in seen:
            contra.append(_item(rec, next(c["text"] for c in rec["claims"] if c["is_faithful"] is False)))
    return {"wice heldout": (wice_items, wice_y),
            "expertqa rand_test (400)": (eqa_items, eqa_y),
            f"expertqa contradicted ({len(contra)})": (contra, np.zeros(len(contra), dtype=int))}


def _seen_contradicted(datasets: Path) -> set[str]:
    """Ids of the contradicted copies of the ExpertQA test answers that are also in train."""
    from franq.evaluation.common import expertqa_seen_in_train
    from franq.fit.shipped_contradictions import contradicted_id

    return {contradicted_id(i) for i in expertqa_seen_in_train(datasets)}


def fit_evidence_sets(datasets: Path) -> dict:
    """The same shape over the fit splits, which no report reads: WiCE fit (205 claims, whole
    pages) and 400 ExpertQA train claims (seed 0). The verifier was trained on these claims,
    each against one window, so they only serve to choose how windows are cut or combined
    (a check biased toward the settings it was trained with)."""
    wice_items, _, wice_y = claim_items(datasets / "wice" / "fit.jsonl")
    eqa_items, _, eqa_y = claim_items(datasets / "expertqa" / "train.jsonl", 400)
    return {"wice fit": (wice_items, wice_y), "expertqa train (400)": (eqa_items, eqa_y)}


COMBINER_PAIR_SETS = ("synthetic-nq", "synthetic-expertqa", "nq-declarative")
"""The pair dev sets (datasets/verifier/dev, three-way labels) the slot combiner is fitted on."""


def combiner_sets(datasets: Path) -> dict[str, tuple[list, list[int]]]:
    """What the slot combiner (franq/data/verifier/slot-combiner.json) is fitted on by
    scripts/fit_slot_combiner.py: ``name -> ([(passages, claim)], labels)``, the pair dev sets
    (labels 0 supported, 1 contradicted, 2 not mentioned) and :func:`fit_evidence_sets`
    (support labels: 0 supported, 3 not supported)."""
    from franq.fit.generations import read_jsonl

    sets = {}
    for name in COMBINER_PAIR_SETS:
        rows = list(read_jsonl(datasets / "verifier" / "dev" / f"{name}.jsonl"))
        sets[name] = ([([r["premise"]], r["claim"]) for r in rows], [int(r["label"]) for r in rows])
    for name, (items, y) in fit_evidence_sets(datasets).items():
        sets[name] = ([(list(ps), c) for ps, c in items], [0 if int(t) == 1 else 3 for t in y])
    return sets


def combiner_inputs(datasets: Path, n: int) -> dict[str, list[float]]:
    """The slot combiner's fit inputs for the first ``n`` pairs of each of its sets (the shipped
    verifier's three probabilities and the slot features), and each slot feature summed over
    every pair of each set (``slot_sums``: set by set, feature by feature; the features cost
    seconds, the verifier minutes): the sample :mod:`franq.fit.shipped_inputs` records and checks."""
    from franq.fit.shipped_inputs import as_record
    from franq.verifier import Verifier, shipped_verifier_dir
    from franq.verifier.slots import FEATURES, features

    items, y, first, sums = [], [], [], []
    for pairs, labels in combiner_sets(datasets).values():
        feats = np.array([features(claim, passages) for passages, claim in pairs])
        items, y, first, sums = items + pairs[:n], y + labels[:n], first + [feats[:n]], sums + list(feats.sum(axis=0))
    first = np.vstack(first)
    verdicts = Verifier(shipped_verifier_dir()).verify(items)
    p3 = np.array([[d.p_supported, d.p_contradicted, d.p_not_mentioned] for d in verdicts])
    return as_record(ClaimInputs(p3[:, 0], np.ones(len(y)), np.zeros(len(y)), p_contradicted=p3[:, 1],
                                 p_not_mentioned=p3[:, 2]), y, uq=False,
                     extra={**{f"slot_{name}": first[:, k] for k, name in enumerate(FEATURES)}, "slot_sums": sums})


def floors_text(cal) -> str:
    """The map floors as the results tables print them: ``T_s 0.750, T_c 0.000, ...``."""
    return ", ".join(f"{k} {v:.3f}" for k, v in map_floors(cal).items())


def map_floors(cal) -> dict[str, float]:
    """The lowest value each fitted UQ map can return (its first isotonic level)."""
    out = {}
    for key, attr in (("T_s", "uq_supported_"), ("T_c", "uq_contradicted_"), ("T_n", "uq_not_mentioned_")):
        m = getattr(cal, attr, None)
        if m is not None:
            out[key] = float(np.min(m.y_thresholds_))
    return out


def evaluate_long(datasets: Path, path, verifier=None, *, backend=None) -> str:
    """AUROCs on the ExpertQA rand_test claims, alone and with the held-out contradicted
    test answers (:data:`~franq.fit.shipped_verifier.TEST_CONTRADICTED`, when committed):
    how many contradicted claims get P(true) < 0.5 and true claims >= 0.5. ``path``: a
    calibrator file, or a list of them (the verifier runs once; one table each)."""
    paths = [Path(x) for x in path] if isinstance(path, (list, tuple)) else [Path(path)]
    from calibration.three_condition import ThreeConditionCalibrator
    from franq.evaluation.common import expertqa_held_out
    from franq.fit.training_claims import training_claims
    from franq.fit.shipped_verifier import (TEST_CONTRADICTED, contradicted_lines, long_verifier_lines,
                                            verifier_backend)

    backend = backend or verifier_backend(verifier)
    real_lines = long_verifier_lines(datasets, backend, expertqa_held_out(datasets))
    sets = [("ExpertQA rand_test claims", training_claims(real_lines))]
    contra = None
    if (datasets / "generations" / TEST_CONTRADICTED).is_file():
        seen = _seen_contradicted(datasets)
        contra_lines = [x for x in contradicted_lines(datasets, backend, TEST_CONTRADICTED) if x.id not in seen]
        contra = training_claims(contra_lines)
        sets.append(("the same + its contradicted answers", training_claims(real_lines + contra_lines)))
    return "\n".join(_long_table(ThreeConditionCalibrator.from_json(p), p, backend.name, sets, contra) for p in paths)


def _long_table(cal, path: Path, backend_name: str, sets, contra) -> str:
    lines = [f"{path}; verifier {backend_name}", "",
             "| claims | n (false) | calibrated | raw 3-cond. mix | calibrated - raw 3-cond. (95% CI, by answer) | "
             "raw binary mix | P_s alone | 1 - P_c alone | true with P(true) >= 0.5 | false with P(true) < 0.5 |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, data in sets:
        p_s, p_c, p_n, a, b, y = (data.p_faithful, data.p_contradicted, data.p_not_mentioned, data.uq_faith,
                                  data.uq_unfaith, data.is_true)
        calibrated = cal.predict(data.inputs())
        raw3 = p_s * a + p_c * a + p_n * b
        raw2 = p_s * a + (1 - p_s) * b
        lines.append(f"| {name} | {len(y)} ({int((1 - y).sum())}) | {_auc(calibrated, y)} | {_auc(raw3, y)} | "
                     f"{_auc_gain(calibrated, raw3, y, data.groups)} | {_auc(raw2, y)} | {_auc(p_s, y)} | {_auc(1 - p_c, y)} | "
                     f"{int((calibrated[y == 1] >= 0.5).sum())} of {int(y.sum())} | "
                     f"{int((calibrated[y == 0] < 0.5).sum())} of {int((1 - y).sum())} |")
    if contra is not None:
        c = cal.predict(contra.inputs())
        lines += ["", f"The {len(c)} contradicted claims alone: P(true) < 0.5 for {int((c < 0.5).sum())}; "
                  f"median P(true) {np.median(c):.3f}; the verifier's P_c is the largest of the three for "
                  f"{int((contra.p_contradicted > np.maximum(contra.p_faithful, contra.p_not_mentioned)).sum())}."]
    return "\n".join([*lines, "", f"Map floors (lowest calibrated value): {floors_text(cal)}.", ""])


def evaluate_short(datasets: Path, path: Path, verifier=None, *, n: int = 200) -> str:
    from calibration.three_condition import ThreeConditionCalibrator
    from franq.fit.shipped_verifier import short_verifier_results, verifier_backend

    cal = ThreeConditionCalibrator.from_json(path)
    _, rows = short_verifier_results(datasets, verifier_backend(verifier), n, split="test")
    return "\n".join([f"nq-open test, first {n} questions, attempted greedy answers of the embedded model; "
                      f"{path.name}", "", *short_table(cal, rows), "",
                      f"Map floors (lowest calibrated value): {floors_text(cal)}.", ""])


def short_table(cal, rows) -> list[str]:
    """The held-out short-form table of ``cal`` on ``rows`` (``short_verifier_results``'s
    ``(variant, AnswerScore, is_true)``), one line per passage variant."""
    lines = ["| passages | answers | wrong | AUROC calibrated | AUROC raw 3-cond. | calibrated - raw (95% CI) "
             "| wrong answers contradicted (P_c largest) | of those, P(true) < 0.5 | right answers with P(true) >= 0.5 "
             "| wrong answers with P(true) >= 0.5 |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for variant in ("clean", "corrupted"):
        sub = [(s.claims[0], y) for v, s, y in rows if v == variant and s.claims and s.claims[0].status == "scored"]
        if not sub:
            continue
        c = [x for x, _ in sub]
        y = np.array([t for _, t in sub], dtype=int)
        p_s, p_c, p_n = (np.array([getattr(x, k) for x in c]) for k in ("p_faithful", "p_contradicted",
                                                                          "p_not_mentioned"))
        a, b = np.array([x.uq_faith for x in c]), np.array([x.uq_unfaith for x in c])
        calibrated = cal.predict(ClaimInputs(p_s, a, b, p_contradicted=p_c, p_not_mentioned=p_n))
        raw3 = p_s * a + p_c * a + p_n * b
        contradicted = (y == 0) & (p_c > np.maximum(p_s, p_n))
        lines.append(f"| {variant} | {len(y)} | {int((y == 0).sum())} | {_auc(calibrated, y)} | {_auc(raw3, y)} | "
                     f"{_auc_gain(calibrated, raw3, y)} | "
                     f"{int(contradicted.sum())} | {int((calibrated[contradicted] < 0.5).sum())} | "
                     f"{int((calibrated[y == 1] >= 0.5).sum())} of {int(y.sum())} | "
                     f"{int((calibrated[y == 0] >= 0.5).sum())} of {int((y == 0).sum())} |")
    return lines
