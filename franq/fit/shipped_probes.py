"""Rebuild the shipped probe file (``probe-<model>.json``) and the probe-preset calibrator
from the committed data, with the embedded model's passes (CPU: minutes to tens of minutes).

The probe file holds, in this order:
- faithfulness probes (``is_faithful``: lookback ratios, hidden states at layer 4, their
  difference with the closed-book pass) and truth probes (``is_true``: hidden and
  hidden_diff at layer 4), fitted on the ExpertQA train answers and WiCE fit items whose
  passes were cached for issue 14: the first 100 ExpertQA train answers in the seeded order
  whose prompt fits 3,000 tokens, and the WiCE fit items whose prompt fits 1,200 tokens
  (docs/BENCHMARKS.md); features rounded as that cache stored them (lookback float32,
  hidden states float16). About 4-10 s of passes per answer, 170 answers.
- semantic entropy probes (``low_semantic_entropy``: hidden and hidden_closed at layer 16,
  mean over the answer's tokens) on the attempted greedy answers of the 300 committed
  nq-open train questions, labels from the short preset's semantic entropy of the committed
  samples; two short passes per answer, 448 answers.

The layers were chosen by cross-validation in the benchmarks (benchmarks/results/
internals-faithfulness.md, se-probe.md); the rebuild fits the recorded feature sets."""
from __future__ import annotations

import hashlib
import json
import logging
from functools import lru_cache
from pathlib import Path

import numpy as np

from franq.lm.load import EMBEDDED_NAME

FAITH_LAYER = 4
SE_LAYER = 16
SE_TRAIN = 300
EXPERTQA_LIMIT, EXPERTQA_MAX_PROMPT = 100, 3000
WICE_MAX_PROMPT = 1200
SE_DATA = "benchmarks/cache/se-probe/train.jsonl (nq-open train, scripts/bench_se_probe.py)"
"""The SE probes' provenance, as the shipped file records it (the script is now ``franq bench se-probe``;
the string stays so that the rebuild is bit-identical)."""

log = logging.getLogger(__name__)


class _Progress:
    """Logs every ``every`` answers (``franq -v`` shows it)."""

    def __init__(self, what: str, total: int, every: int = 25):
        self.what, self.total, self.every, self.done = what, total, every, 0

    def __call__(self, n: int = 1) -> None:
        before, self.done = self.done, self.done + n
        if self.done // self.every > before // self.every or self.done == self.total:
            log.info("%s: %d/%d answers", self.what, self.done, self.total)


@lru_cache(maxsize=1)
def _pipeline():
    """The embedded model's pipeline (one thread: the shipped files were fitted that way)."""
    from franq.config import FranqConfig
    from franq.pipeline import Franq

    return Franq.from_config(FranqConfig.from_dict({"model": {"threads": 1}, "faithfulness": {"name": "lexical"},
                                                    "calibration": {"calibrator": "none"}}))


# ---------------------------------------------------------------------- semantic entropy probes
def se_rows(datasets: Path, split: str = "train", n: int = SE_TRAIN) -> list[dict]:
    """The attempted greedy answers of the first ``n`` committed nq-open questions of
    ``split`` as labelled records (one claim = the answer, its semantic entropy and
    correctness), as ``franq fit probe`` reads them; ``meta`` carries the short preset's
    P_faithful. Train takes the clean and corrupted passage lists, test the clean ones."""
    from franq.evaluation.common import attempted, cached_sample_set, is_correct
    from franq.fit.generations import short_observed
    from franq.fit.shipped_calibrators import _short_franq
    from franq.io import Example

    fr, _ = _short_franq()
    rows, _ = short_observed(datasets, EMBEDDED_NAME, split, n,
                             ("clean", "corrupted") if split == "train" else ("clean",))
    kept = [(it, rec, variant) for it, rec, variant in rows if attempted(rec["greedy"]["text"])]
    scores = fr.score_many([Example(it.question, it.passages, rec["greedy"]["text"]) for it, rec, _ in kept],
                           sample_sets=[cached_sample_set(rec) for _, rec, _ in kept], generated=True)
    out = []
    for (it, rec, variant), sc in zip(kept, scores):
        c, text = sc.claims[0], rec["greedy"]["text"]
        out.append({"id": f"{it.id}-{variant}", "question": it.question,
                    "passages": [{"title": p.title, "text": p.text} for p in it.passages], "answer": text,
                    "claims": [{"text": text.strip(), "semantic_entropy": round(c.signals["u_semantic_entropy"], 6),
                                "is_true": bool(is_correct(text, it.answers))}],
                    "meta": {"p_faithful": c.p_faithful, "uq_faith": c.uq_faith, "uq_unfaith": c.uq_unfaith,
                             "p_true_raw": c.p_true_raw, "variant": variant}})
    return out


@lru_cache(maxsize=2)
def se_fit(datasets: Path):
    """The two semantic entropy probes and the probe-preset calibrator (fitted on their
    out-of-fold outputs), from one run of the passes."""
    from calibration.contract import ClaimInputs
    from calibration.franq import FranqCalibrator
    from franq.calibrate import stack_key
    from franq.fit.probe import cross_validate, fit_probe, labelled_features, target_labels
    from franq.io import parse_example

    rows = se_rows(datasets)
    text = "".join(json.dumps(r) + "\n" for r in rows)
    specs = [{"kind": "hidden", "layers": [SE_LAYER]}, {"kind": "hidden_closed", "layers": [SE_LAYER]}]
    examples = [parse_example({k: v for k, v in r.items() if k != "meta"}) for r in rows]
    x, _, _ = labelled_features(_pipeline(), examples, specs, batch_size=8,
                                progress=_Progress("semantic entropy probes' passes", len(examples)))
    x = [v.astype(np.float32) for v in x]  # as the benchmark's feature cache stored them
    y, info = target_labels("low_semantic_entropy", {"semantic_entropy": np.array(
        [r["claims"][0]["semantic_entropy"] for r in rows])})
    groups = [r["id"].rsplit("-", 1)[0] for r in rows]  # a question's clean and corrupted lists together
    fitted_on = {"data": SE_DATA, "data_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), **info}
    probes = [fit_probe(xs, y, groups, target="low_semantic_entropy", features=s, fitted_on=fitted_on)
              for s, xs in zip(specs, x)]
    oof = [cross_validate(xs, y, groups, c_grid=(p.cv["C"],))[1] for p, xs in zip(probes, x)]
    p_f = np.array([r["meta"]["p_faithful"] for r in rows], dtype=float)
    is_true = np.array([r["claims"][0]["is_true"] for r in rows], dtype=int)
    stack = stack_key(model=EMBEDDED_NAME, faithfulness="combined-v1", uq_faith="se_probe",
                      uq_unfaith="se_probe_closed", mode="probe")
    # the description the shipped file carries (the script is now `franq bench se-probe`): kept, bit-identical
    cal = FranqCalibrator(variant="condition", fitted_for=stack, description=(
        f"probe-preset calibrator: fitted by scripts/bench_se_probe.py on {len(is_true)} nq-open train answers "
        "(out-of-fold semantic entropy probe outputs; labels: normalized match of the greedy answer)"))
    cal.fit(ClaimInputs(p_f, oof[0], oof[1]), is_true)
    return tuple(probes), cal


def probe_calibrator(datasets: Path, out: Path, raw=None) -> Path:
    """The probe preset's calibrator (semantic entropy probes' out-of-fold outputs)."""
    from franq.fit.shipped_calibrators import calibrator_name

    _, cal = se_fit(datasets)
    path = out / calibrator_name("probe", cal.fitted_for)
    cal.to_json(path)
    return path


# ---------------------------------------------------------------------- faithfulness and truth probes
def _cached_answers(records: list[dict], max_prompt: int, limit: int | None) -> list[dict]:
    """The records in the seeded order the internals cache ran them (``random.Random(0)``),
    the first ``limit``, less those whose prompt is over ``max_prompt`` tokens."""
    import random

    from franq.io import parse_example

    lm = _pipeline().lm
    order = list(records)
    random.Random(0).shuffle(order)
    out = []
    for rec in order[:limit] if limit else order:
        ex = parse_example(rec)
        if len(lm.rag_prompt(ex.question, ex.passages).ids) <= max_prompt:
            out.append(rec)
    return out


def internals_features(records: list[dict]) -> dict[tuple[str, int], dict]:
    """Per (answer id, claim index) of each scorable claim: the lookback ratios (float32),
    the hidden states at :data:`FAITH_LAYER` with and without the passages (float16), mean
    over the claim's tokens, from one pass with capture per answer."""
    from franq.io import parse_example
    from franq.lm.capture import CaptureSpec

    fr = _pipeline()
    spec = CaptureSpec(attention=True, hidden_layers=(FAITH_LAYER,), closed_hidden_layers=(FAITH_LAYER,))
    out, progress = {}, _Progress("faithfulness probes' passes", len(records))
    for rec in records:
        progress()
        evidence = fr.claim_evidence([parse_example(rec)], capture=spec)[0]
        for i, e in enumerate(evidence):
            if e is None:
                continue
            pos = list(e.claim.token_positions)
            out[(rec["id"], i)] = {
                "lookback": e.internals.pooled(pos, "lookback").astype(np.float32),
                "hidden": e.internals.hidden[FAITH_LAYER][pos].mean(0).astype(np.float16).astype(np.float32),
                "hidden_closed": e.closed_internals.hidden[FAITH_LAYER][pos].mean(0).astype(np.float16
                                                                                             ).astype(np.float32)}
    return out


def faithfulness_probes(datasets: Path) -> tuple:
    """The lookback / hidden / hidden_diff faithfulness probes and the hidden / hidden_diff
    truth probes, fitted as the ``--fit-probes`` step of the internals benchmark (now ``franq bench internals``) did."""
    from franq.fit.faithfulness_map import labelled_claims
    from franq.fit.generations import read_jsonl
    from franq.fit.probe import fit_probe
    from franq.internals.probe_file import data_hash

    train_path, wice_path = datasets / "expertqa" / "train.jsonl", datasets / "wice" / "fit.jsonl"
    train, wice = read_jsonl(train_path), read_jsonl(wice_path)
    feats = internals_features(_cached_answers(train, EXPERTQA_MAX_PROMPT, EXPERTQA_LIMIT)
                               + _cached_answers(wice, WICE_MAX_PROMPT, None))
    claims = [c for c in labelled_claims(train) + labelled_claims(wice) if (c.answer_id, c.index) in feats]
    f = [feats[(c.answer_id, c.index)] for c in claims]
    y = np.array([c.is_faithful for c in claims], int)
    groups = [c.answer_id for c in claims]
    h, diff = np.stack([v["hidden"] for v in f]), np.stack([v["hidden"] - v["hidden_closed"] for v in f])
    th, tw = data_hash(train_path), data_hash(wice_path)
    fitted_on = {"data": f"ExpertQA train (datasets/expertqa/train.jsonl, sha256 {th[:12]}) + WiCE fit "
                         f"(datasets/wice/fit.jsonl, sha256 {tw[:12]}), claims with a cached pass",
                 "n_answers": len(set(groups)), "data_sha256": th, "data_sha256_wice_fit": tw}
    layer = {"layers": [FAITH_LAYER]}
    probes = [fit_probe(np.stack([v["lookback"] for v in f]), y, groups, target="is_faithful",
                        features={"kind": "lookback"}, fitted_on=fitted_on),
              fit_probe(h, y, groups, target="is_faithful", features={"kind": "hidden", **layer}, fitted_on=fitted_on),
              fit_probe(diff, y, groups, target="is_faithful", features={"kind": "hidden_diff", **layer},
                        fitted_on=fitted_on)]
    truth = {(r["id"], i): c.get("is_true") for r in train for i, c in enumerate(r["claims"])}
    keep = [k for k, c in enumerate(claims) if truth.get((c.answer_id, c.index)) is not None]
    yt = np.array([truth[(claims[k].answer_id, claims[k].index)] for k in keep], int)
    gt = [groups[k] for k in keep]
    probes += [fit_probe(h[keep], yt, gt, target="is_true", features={"kind": "hidden", **layer}, fitted_on=fitted_on),
               fit_probe(diff[keep], yt, gt, target="is_true", features={"kind": "hidden_diff", **layer},
                         fitted_on=fitted_on)]
    return tuple(probes)


def probe_file(datasets: Path, out: Path, raw=None) -> Path:
    """The shipped probe file: faithfulness and truth probes, then the semantic entropy probes."""
    from franq.internals.probe_file import ProbeFile, packaged_probe_path

    se, _ = se_fit(datasets)
    path = out / packaged_probe_path(EMBEDDED_NAME).name
    ProbeFile(EMBEDDED_NAME, faithfulness_probes(datasets) + se).save(path)
    return path
