"""Short-form FRANQ on a small nq-open-oracle sample with the embedded model: cost per
question, and the equivalence-judge choice (normalized answers vs the local LM as judge).

For each question (gold passage + one distractor passage from another question): the
greedy one-line answer, N samples with the passages, N samples without them, both
judges on the same samples. Correctness label: a normalized gold answer occurs in the
normalized greedy answer (the usual NQ-open match). One JSON line per question goes to
--out as it finishes (so a partial run is usable); ``--summarize`` prints the tables.
Run by ``franq bench short``:

    franq bench short --questions 12 --out benchmarks/results/short-form-cost.jsonl
    franq bench short --summarize benchmarks/results/short-form-cost.jsonl
"""
from __future__ import annotations

import gzip
import json
import statistics
import time
from pathlib import Path

import numpy as np

from franq.evaluation.data import raw_data_dir


def load_questions(k: int, seed: int, raw: str | Path | None = None) -> list[dict]:
    """``k`` seeded nq-open-oracle questions, each with its gold passage and one distractor
    (raw data from ``raw`` or ``$FRANQ_RAW_DATA``)."""
    rows = [json.loads(line) for line in gzip.open(raw_data_dir(raw) / "nq-open-oracle.jsonl.gz", "rt", encoding="utf-8")]
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(rows))
    out = []
    for i in order[:k]:
        distractor = rows[int(order[-1 - len(out)])]["ctxs"][0]
        row = rows[int(i)]
        out.append({"question": row["question"], "answers": row["answers"],
                    "passages": [{"title": c["title"], "text": c["text"]} for c in (row["ctxs"][0], distractor)]})
    return out


def run(*, questions: int = 12, n: int = 10, max_new_tokens: int = 24, seed: int = 0, model: str | None = None,
        lm_judge_closed: bool = False, out: str | Path = "benchmarks/results/short-form-cost.jsonl",
        raw: str | Path | None = None) -> None:
    """One JSON line per question appended to ``out`` (questions already there are skipped)."""
    from franq.faithfulness.lexical import LexicalFaithfulness
    from franq.equivalence.lm_judge import LMJudge
    from franq.equivalence.normalized import NormalizedAnswerJudge, normalize_answer
    from franq.lm import CausalLM
    from franq.faithfulness.base import passages_context
    from franq.lm.prompts import SHORT_INSTRUCTION
    from franq.mix import mix
    from franq.scorers.eigval import SumEigenvaluesScorer
    from franq.scorers.diversity import SampleContext
    from franq.scorers.semantic_entropy import SemanticEntropyScorer
    from franq.evidence.samples import SamplingOptions
    from franq.types import Passage

    lm = CausalLM.load(model)
    judges = {"normalized": NormalizedAnswerJudge(), "lm": LMJudge(lm)}
    faith = LexicalFaithfulness()
    opts = SamplingOptions(n_samples=n, max_new_tokens=max_new_tokens)
    se, ev = SemanticEntropyScorer(), SumEigenvaluesScorer()
    done = set()
    out_path = Path(out)
    if out_path.exists():
        done = {json.loads(line)["question"] for line in out_path.open()}
    for q in load_questions(questions, seed, raw):
        if q["question"] in done:
            continue
        passages = [Passage(p["text"], p["title"]) for p in q["passages"]]
        rec = {"question": q["question"], "answers": q["answers"], "t": {}}
        t = time.perf_counter()
        rag_ids = lm.rag_prompt(q["question"], passages, reserve=opts.max_new_tokens,
                                instruction=SHORT_INSTRUCTION).ids
        answer = lm.sample(rag_ids, 1, temperature=0.0, max_new_tokens=opts.max_new_tokens).samples[0].text
        rec["t"]["greedy"] = time.perf_counter() - t
        rec["answer"] = answer
        rec["correct"] = any(normalize_answer(a) in normalize_answer(answer) for a in q["answers"] if normalize_answer(a))
        t = time.perf_counter()
        p_f = float(faith.predict([(passages_context(passages), f"{q['question']} {answer}")])[0])
        rec["t"]["faithfulness"] = time.perf_counter() - t
        rec["p_faithful"] = p_f
        for which, prompt in (("rag", rag_ids),
                              ("closed", lm.closed_book_prompt(q["question"], instruction=SHORT_INSTRUCTION).ids)):
            t = time.perf_counter()
            samples = opts.draw(lm, prompt, seed_offset=0 if which == "rag" else 1)
            rec["t"][f"sample_{which}"] = time.perf_counter() - t
            rec[f"samples_{which}"] = list(samples.texts)
            for jname, judge in judges.items():
                if which == "closed" and jname == "lm" and not lm_judge_closed:
                    continue
                t = time.perf_counter()
                ctx = SampleContext(samples.texts, samples.logprobs, judge.entailment(q["question"], samples.texts))
                rec["t"][f"judge_{jname}_{which}"] = time.perf_counter() - t
                rec[f"u_se_{jname}_{which}"] = float(se.uncertainty([ctx])[0])
                rec[f"u_eigval_{jname}_{which}"] = float(ev.uncertainty([ctx])[0])
        for jname in judges:
            p_se = se.probability(rec[f"u_se_{jname}_rag"])
            for unf in ("rag", "closed"):
                key = f"u_eigval_{jname}_{unf}"
                if key in rec:
                    rec[f"franq_{jname}_unfaith_{unf}"] = float(mix(p_f, p_se, ev.probability(rec[key])))
        # the full default short-form score (greedy answer given): samples + judge + faithfulness
        rec["t"]["franq_short_default"] = (rec["t"]["sample_rag"] + rec["t"]["judge_normalized_rag"]
                                           + rec["t"]["faithfulness"])
        with out_path.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        print(json.dumps({k: rec[k] for k in ("question", "answer", "correct")}), {k: round(v, 1) for k, v in rec["t"].items()}, flush=True)


def auroc(scores, labels) -> float:
    from franq.evaluation.metrics import auroc

    return auroc(scores, np.asarray(labels, dtype=int))


def summarize(path: str) -> None:
    recs = [json.loads(line) for line in open(path)]
    y = [r["correct"] for r in recs]
    print(f"{len(recs)} questions, greedy accuracy {np.mean(y):.2f}\n")
    print("| score (higher = more likely true) | AUROC for correctness |")
    print("|---|---|")
    rows = [("P_faithful (lexical, question + answer)", [r["p_faithful"] for r in recs])]
    for j in ("normalized", "lm"):
        rows += [(f"exp(-SE), {j} judge", [np.exp(-r[f"u_se_{j}_rag"]) for r in recs]),
                 (f"1/eigval (rag samples), {j} judge", [1 / r[f"u_eigval_{j}_rag"] for r in recs])]
        if all(f"u_eigval_{j}_closed" in r for r in recs):
            rows.append((f"1/eigval (closed-book samples), {j} judge", [1 / r[f"u_eigval_{j}_closed"] for r in recs]))
        for unf in ("rag", "closed"):
            k = f"franq_{j}_unfaith_{unf}"
            if all(k in r for r in recs):
                rows.append((f"FRANQ short, {j} judge, UQ_unfaith from {unf} samples", [r[k] for r in recs]))
    for name, s in rows:
        print(f"| {name} | {auroc(s, y):.3f} |")
    print("\n| stage | median s per question | max s |")
    print("|---|---|---|")
    for k in recs[0]["t"]:
        v = [r["t"][k] for r in recs if k in r["t"]]
        print(f"| {k} | {statistics.median(v):.2f} | {max(v):.2f} |")
    agree = np.mean([len(set(r["samples_rag"])) for r in recs])
    print(f"\nmean unique sample texts (of N) with passages: {agree:.1f}")
