"""Real contradictions for the shipped three-condition long-form calibrator: ExpertQA claims
(GPT-4 / Bing answers) are almost never contradicted by their passages, so T_c, the map
fitted on contradicted claims, needs claims that are. Here: answers of the ExpertQA
calibration sample with one true claim corrupted by a typed substitution (same-type entity,
number, year, negation, WordNet antonym; :class:`franq.fit.verifier.corrupt.Corruptor`) in
the answer text itself, labelled false and contradicted, and scored like any answer (the
embedded model's passes on the corrupted answer, the verifier on its passages).
"""
from __future__ import annotations

import random
from pathlib import Path


def contradicted_id(record_id: str) -> str:
    """The id of the corrupted copy of record ``record_id`` (:func:`corrupted_records`)."""
    return f"{record_id}-contradicted"


def corrupted_records(records: list[dict], *, seed: int = 0) -> list[dict]:
    """One record per answer that has a true claim found verbatim in its answer text: that
    claim corrupted in the answer and in the claim list (``is_true`` false, ``is_faithful``
    false, ``condition`` contradicted); the other claims left unlabelled (not fitted on)."""
    from franq.fit.verifier.corrupt import Corruptor, tagger
    from franq.lm.resources import wordnet_reader

    nlp = tagger()
    rng = random.Random(seed)
    corruptor = Corruptor(nlp, wordnet_reader(), rng)
    sentences = [s for rec in records for p in rec["passages"] for s in p["text"].split(". ")[:6]]
    for doc in nlp.pipe(sentences[:4000], batch_size=64):
        corruptor.add_entities(doc)
    out = []
    for rec in records:
        candidates = [i for i, c in enumerate(rec["claims"]) if c.get("is_true") and c["text"] in rec["answer"]]
        rng.shuffle(candidates)
        for i in candidates:
            bad = corruptor.corrupt(rec["claims"][i]["text"])
            if bad is None:
                continue
            text = rec["claims"][i]["text"]
            claims = [{"text": bad[0] if k == i else c["text"], "is_true": False if k == i else None,
                       "is_faithful": False if k == i else None} for k, c in enumerate(rec["claims"])]
            out.append({"id": contradicted_id(rec["id"]), "question": rec["question"], "passages": rec["passages"],
                        "answer": rec["answer"].replace(text, bad[0], 1), "claims": claims, "corruption": bad[1]})
            break
    return out


def scored_contradictions(datasets: Path, records: list[dict], backend, stack) -> list:
    """``records`` (from :func:`corrupted_records`) scored by the long preset with the
    embedded model and ``backend``, as ResultLines under ``stack``."""
    import dataclasses

    from franq.config import FranqConfig
    from franq.io import parse_example
    from franq.lm import CausalLM
    from franq.pipeline import Franq
    from franq.results import ResultLine

    config = FranqConfig.from_dict({"mode": "long", "calibration": {"calibrator": "none"}})
    fr = Franq(config, CausalLM.load(None, device="cpu"), faithfulness=backend)
    examples = [parse_example({k: r[k] for k in ("id", "question", "passages", "answer", "claims")}) for r in records]
    out = []
    for ex, score in zip(examples, fr.score_many(examples)):
        result = dataclasses.replace(score, stack=stack)
        out.append(ResultLine(f"contradicted {ex.id}", ex.id, result, ex))
    return out
