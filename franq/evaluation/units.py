"""Benchmark units with labels and raw signals, built from the observe caches.

A unit is what the metrics rank: a labelled claim (long form) or an attempted answer
(short form). :class:`Units` holds, for one split, the binary factuality labels, the gold
faithfulness labels where known (NaN elsewhere) and every method's raw signal by name.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from franq import registry
from franq.equivalence.normalized import normalize_answer
from franq.lm.labels import pair_probability

NOT_ATTEMPTED = re.compile(
    r"\b(?:i (?:don't|do not|cannot|can't|am unable to|am not able to) (?:know|answer|say|determine|find)"
    r"|(?:no|not enough) information|(?:is|are) not (?:mentioned|provided|specified|given|stated)"
    r"|(?:does|do) not (?:mention|provide|specify|say|state|contain)|cannot be determined|unknown)\b",
    re.IGNORECASE)
"""Refusals: an answer matching this is "not attempted" and left out, as the paper does."""

TIE_RTOL = 1e-12
"""Signals of one split that agree to this relative tolerance are one value: see
:func:`merge_near_ties`. Float noise between equal signals is ~1e-15 relative; the closest
distinct signals of the committed benchmark are ~1e-8 apart."""


def merge_near_ties(values: np.ndarray, *, rtol: float = TIE_RTOL) -> np.ndarray:
    """``values`` with each run of sorted finite values, every one within ``rtol``
    (relative) of the next, replaced by the run's smallest value; NaN stays NaN.

    Mathematically equal signals computed along different floating-point paths (the
    eccentricity or degree matrix of two sample sets with the same graph: an
    eigendecomposition, a sum in another order) differ in their last bits, by amounts that
    depend on the BLAS / LAPACK build. A ranking metric would order them by that noise;
    merged, they are exact ties, which every metric counts the same way on every machine.
    """
    v = np.array(values, dtype=np.float64)
    finite = np.flatnonzero(np.isfinite(v))
    order = finite[np.argsort(v[finite], kind="stable")]
    s = v[order]
    if len(s) < 2:
        return v
    new_run = np.abs(np.diff(s)) > rtol * np.maximum(np.abs(s[:-1]), np.abs(s[1:]))
    starts = np.concatenate([[0], np.flatnonzero(new_run) + 1])
    v[order] = s[starts][np.cumsum(np.concatenate([[False], new_run]))]
    return v


@dataclass(frozen=True)
class Units:
    """One split's units; each signal's near-ties are merged (:func:`merge_near_ties`)."""

    ids: tuple[str, ...]
    is_true: np.ndarray
    is_faithful: np.ndarray  # 1 / 0 / NaN (unknown)
    signals: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.signals[name]

    @classmethod
    def from_rows(cls, rows: Sequence[dict]) -> Units:
        names = sorted({k for r in rows for k in r["signals"]})
        missing = [n for n in names if any(n not in r["signals"] for r in rows)]
        if missing:
            raise ValueError(f"signals missing on some units: {missing}")
        return cls(tuple(r["id"] for r in rows), np.array([r["is_true"] for r in rows], dtype=np.int64),
                   np.array([np.nan if r.get("is_faithful") is None else float(r["is_faithful"]) for r in rows]),
                   {n: merge_near_ties(np.array([r["signals"][n] for r in rows], dtype=np.float64))
                    for n in names})


def long_units(pairs: Sequence[tuple[dict, dict]], scorers: Sequence[str] = ("claim_prob", "parametric")
               ) -> tuple[Units, dict]:
    """``(dataset record, observe_long record)`` pairs -> the labelled scored claims, with
    every signal the named scorers declare."""
    names = [s.name for name in scorers for s in registry.lookup("scorers", name).signals]
    rows, skipped = [], {"unlabelled": 0, "not_scored": 0}
    for rec, obs in pairs:
        if len(rec["claims"]) != len(obs["claims"]):
            raise ValueError(f"{rec['id']}: {len(rec['claims'])} claims in the data, {len(obs['claims'])} observed")
        for i, (gold, got) in enumerate(zip(rec["claims"], obs["claims"])):
            if gold.get("is_true") is None:
                skipped["unlabelled"] += 1
                continue
            if got["status"] != "scored":
                skipped["not_scored"] += 1
                continue
            c = got["signals"] if "signals" in got else got["components"]  # "components": snapshots before 0.2
            lt, lf = got["p_true_logprobs"]
            rows.append({"id": f"{rec['id']}#{i}", "is_true": int(gold["is_true"]), "is_faithful": gold.get("is_faithful"),
                         "signals": {"p_faithful": got["p_faithful"], **{n: c[n] for n in names},
                                     "max_token_entropy": got["max_token_entropy"],
                                     "mean_token_entropy": got["mean_token_entropy"],
                                     "p_true": float(pair_probability(lt, lf))}})
    return Units.from_rows(rows), skipped


def is_correct(answer: str, gold: Sequence[str]) -> bool:
    """Normalized match (Natural Questions style): a gold answer occurs in the answer."""
    text = f" {normalize_answer(answer)} "
    return any(f" {g} " in text for g in (normalize_answer(a) for a in gold) if g)


def attempted(answer: str) -> bool:
    return bool(answer.strip()) and not NOT_ATTEMPTED.search(answer)


class NamedModel:
    """Stands in for the LM where only its name is read (scoring cached samples, or text
    only): ``Franq(config, NamedModel(name), ...)``. Shared with :mod:`franq.fit` through
    :mod:`franq.evaluation.common`."""

    def __init__(self, name: str):
        self.name = name


def short_units(items: Sequence, records: Sequence[dict], *, model_name: str, faithfulness,
                judge=None) -> tuple[Units, dict]:
    """nq-open items with their ``observe_short`` records -> the attempted answers.

    FRANQ's short-form values come from the pipeline's short preset on the cached samples
    (no model pass); the sequence-level baselines from the greedy answer's tokens.
    """
    from lm_polygraph.estimators import SentenceSAR

    from franq.config import FranqConfig
    from franq.io import Example
    from franq.evaluation.observe import cached_sample_set
    from franq.pipeline import Franq

    config = FranqConfig.from_dict({"mode": "short", "calibration": {"calibrator": "none"}})
    franq = Franq(config, NamedModel(model_name), faithfulness=faithfulness, equivalence=judge)
    kept, skipped = [], {"not_attempted": 0}
    for it, rec in zip(items, records):
        text = rec["greedy"]["text"]
        if not attempted(text) or "p_true_logprobs" not in rec:
            skipped["not_attempted"] += 1
            continue
        kept.append((it, rec))
    examples = [Example(it.question, it.passages, rec["greedy"]["text"]) for it, rec in kept]
    sample_sets = [cached_sample_set(rec) for _, rec in kept]
    scores = franq.score_many(examples, sample_sets=sample_sets, generated=True)  # the model's own answers
    draws = franq.preset("short").evidence
    contexts = [draws.context(it.question, s) for (it, _), s in zip(kept, sample_sets)]
    sar = SentenceSAR()({"sample_log_probs": [c.logprobs for c in contexts],
                         "sample_sentence_similarity": [c.similarity() for c in contexts]})
    rows = []
    for k, ((it, rec), score) in enumerate(zip(kept, scores)):
        g = rec["greedy"]
        lp = np.asarray(g["token_logprobs"], dtype=np.float64)
        lt, lf = rec["p_true_logprobs"]
        claim = score.claims[0]
        rows.append({"id": it.id, "is_true": int(is_correct(g["text"], it.answers)), "is_faithful": None,
                     "signals": {"log_seq_prob": float(lp.sum()), "mean_logprob": float(lp.mean()),
                                 "mean_token_entropy": float(np.mean(g["token_entropies"])),
                                 "p_true": float(pair_probability(lt, lf)),
                                 "log_parametric": float(np.sum(rec["closed_logprobs"])),
                                 "p_faithful": claim.p_faithful, "u_sentence_sar": float(sar[k]),
                                 **claim.signals}})
    return Units.from_rows(rows), skipped
