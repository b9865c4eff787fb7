"""Benchmark passes: run the model once per answer and keep everything every method needs.

Short form (in-policy, nq-open): :func:`observe_short` generates the greedy answer and N
samples from one prefill (the greedy answer is row 0), then asks P(True) on the prompt's
kept cache and teacher-forces the answer without the passages (Parametric Knowledge).

Long form (observer mode, ExpertQA): :func:`observe_long` scores an existing answer on its
given claims with the real pipeline (:meth:`franq.pipeline.Franq.score_observed`), which
keeps the with-passages pass, and adds the general baselines' inputs from it: per-token
entropies and per-claim P(True) (follow-up questions on the kept cache).

Records are plain JSON and are cached by :func:`run_cached` (append-only, resumable).
"""
from __future__ import annotations

import copy
import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator

import numpy as np

from franq.evidence.samples import SamplingOptions, short_rag_prompt
from franq.io import Example
from franq.lm.prompts import ANSWER_QUESTION, CLAIM_QUESTION, PROMPT_VERSION, SHORT_INSTRUCTION
from franq.runners.output import OutputLog
from franq.evaluation.p_true import PTrue

log = logging.getLogger(__name__)


def _floats(values) -> list[float]:
    return [round(float(v), 6) for v in values]


def observe_short(lm, ptrue: PTrue, question: str, passages, *, options: SamplingOptions,
                  on_overflow: str = "truncate") -> dict:
    """Greedy answer + samples with the passages, P(True) and the closed-book pass."""
    prompt = short_rag_prompt(lm, question, passages, options=options, on_overflow=on_overflow)
    pre = lm.prefill(prompt.ids)
    kept = copy.deepcopy(pre.cache)
    s = options.draw(lm, prompt.ids, greedy_first=True, prefill=pre)
    greedy, samples = s.samples[0], s.samples[1:]
    record = {
        "prompt_tokens": len(prompt.ids), "warnings": list(prompt.warnings),
        "greedy": {"text": greedy.text, "token_ids": list(greedy.token_ids),
                   "token_logprobs": _floats(greedy.token_logprobs),
                   "token_entropies": _floats(greedy.token_entropies), "stop": greedy.stop},
        "samples": [{"text": x.text, "logprob": round(x.logprob, 6), "n_tokens": len(x.token_ids)} for x in samples],
    }
    answer_ids = lm.encode(greedy.text) if greedy.text else []
    if answer_ids:
        follow = answer_ids + ptrue.followup(greedy.text, ANSWER_QUESTION)
        lp = lm.next_token_logprobs_after(kept, len(prompt.ids), [follow], ptrue.candidates)[0]
        closed = lm.closed_book_prompt(question, instruction=SHORT_INSTRUCTION)
        record["p_true_logprobs"] = _floats(lp)
        record["closed_logprobs"] = _floats(lm.continuation_logprobs([(closed.ids, answer_ids)])[0])
    return record


def observe_long(franq, ptrue: PTrue, example: Example) -> dict:
    """The pipeline's result for ``example`` (given claims) plus entropies and P(True)."""
    result, rag_pass = franq.score_observed(example)
    scored = [c for c in result.claims if c.status == "scored"]
    follow = ptrue.claim_followups(example.answer, [c.claim.text for c in scored])
    lp = (franq.lm.next_token_logprobs_after(rag_pass.cache, rag_pass.length, follow, ptrue.candidates)
          if follow else np.zeros((0, 2)))
    claims = []
    k = 0
    for c in result.claims:
        row = {"text": c.claim.text, "status": c.status}
        if c.status == "scored":
            pos = list(c.claim.token_positions)
            ent = rag_pass.token_entropies[pos]
            row |= {"p_faithful": c.p_faithful, "p_true_raw": c.p_true_raw, "signals": c.signals,
                    "max_token_entropy": round(float(ent.max()), 6),
                    "mean_token_entropy": round(float(ent.mean()), 6),
                    "p_true_logprobs": _floats(lp[k])}
            k += 1
        claims.append(row)
    return {"claims": claims, "warnings": list(result.warnings), "model": result.stack.model,
            "faithfulness": result.stack.faithfulness}


def cached_sample_set(record: dict):
    """The samples of an ``observe_short`` record as a :class:`~franq.lm.sampling.SampleSet`
    the short preset scores (texts, likelihoods and token counts; no token ids)."""
    from franq.lm.sampling import Sample, SampleSet

    return SampleSet(tuple(Sample(s["text"], (), (), s["logprob"], "cached", n_tokens=s.get("n_tokens"))
                           for s in record["samples"]), record["prompt_tokens"])


def cache_key(*parts) -> str:
    return hashlib.sha1(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def short_key(item_id: str, passage_ids, options: SamplingOptions) -> str:
    """Everything a short-form record depends on besides the model (in the file name):
    the item, its passages, the sampling options, the prompt and the P(True) question."""
    return cache_key(item_id, list(passage_ids), options.__dict__, PROMPT_VERSION, SHORT_INSTRUCTION, ANSWER_QUESTION)


def long_key(item_id: str, stack: dict) -> str:
    """A long-form record depends on the item, the scoring stack (model, faithfulness,
    scorers, prompt version) and the P(True) question."""
    return cache_key(item_id, stack, CLAIM_QUESTION)


def run_cached(path: str, items: Iterable[tuple[str, dict]], observe: Callable[[dict], dict], *,
               progress: bool = True, known: dict[str, dict] | None = None) -> Iterator[dict]:
    """For each ``(key, item)``: the cached record for ``key`` in the JSONL ``path`` (or in
    ``known``, e.g. a committed snapshot), or ``observe(item)`` appended to ``path`` (one
    fsynced line per record; a crash loses at most the record in flight). Yields records
    in input order."""
    items = list(items)
    done: dict[str, dict] = dict(known or {})
    out = OutputLog(path)
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                rec = json.loads(line)
                done[rec["id"]] = rec
        todo = sum(1 for key, _ in items if key not in done)
        start, n = time.perf_counter(), 0
        for key, item in items:
            if key not in done:
                rec = {"id": key, **observe(item)}
                out.append([json.dumps(rec, ensure_ascii=False)])
                done[key] = rec
                n += 1
                if progress and (n % 10 == 0 or n == todo):
                    rate = n / (time.perf_counter() - start)
                    log.warning("%s: %d/%d new records, %.2f/s, ETA %.0f s", path, n, todo, rate,
                                (todo - n) / rate)
            yield done[key]
    finally:
        out.close()
