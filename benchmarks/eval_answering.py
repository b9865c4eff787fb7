"""Answering with faithfulness, sufficient context and selective generation on nq-open
(papers 000 and 003), with the embedded model. Two steps, like franq bench:
(A script, not a `franq bench` command: it evaluates the answering app, franq.apps, which the workbench may not import.)

    python benchmarks/eval_answering.py observe [--limit N] [--autorater-limit M]   # model passes, cached
    python benchmarks/eval_answering.py snapshot                                     # caches -> datasets/generations/
    python benchmarks/eval_answering.py report [--n-boot 1000]                       # tables, PNG, docs

Data: the nq-open questions whose greedy answers, samples and P(True) are cached in
datasets/generations/short-nq-open.*.jsonl.gz (train 1-300 and test 1-200, pooled), each
with its clean passage list, except a seeded 18% of the questions that get their
corrupted list (gold passage replaced by a BM25 distractor): 82% answerable, as the NQ set
of paper 000 (Table 1). Labels: V = the answer is correct (normalized gold match) and the
gold passage is present; V^SfC = the gold passage is present.

observe adds, per question, what the cache lacks: the closed-book greedy answer (no-RAG
fallback, dual generation), the pre-answering P(yes), the label-probability sufficiency
(corrected and, for the first ``--full-limit`` questions, verbatim prompts), the judge-NLI
post-answering score (also only for those)
(prompt-based NLI on the embedded model, 000 appendix A.3), and first, for the first
``--autorater-limit`` questions the 1-shot CoT autorater's verdict. Cached in
benchmarks/cache/answering/ (append-only, resumable; snapshot in datasets/generations/).
"""
from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import random
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from franq.evaluation.data import load_nq_open
from franq.evaluation.observe import cache_key, run_cached, short_key

CACHE = ROOT / "benchmarks" / "cache" / "answering"
SHORT_SNAPSHOT = ROOT / "datasets" / "generations" / "short-nq-open.embedded-SmolLM2-135M-Instruct.Q4-1.jsonl.gz"
SNAPSHOT = ROOT / "datasets" / "generations" / "answering-nq-open.embedded-SmolLM2-135M-Instruct.Q4-1.jsonl.gz"
NQ = ROOT / "datasets" / "nq-open"
SPLITS = (("train", 300), ("test", 200))
INSUFFICIENT_SHARE = 0.18  # paper 000 Table 1: NQ has 82% answerable questions

log = logging.getLogger("eval_answering")


def eval_items():
    """The pooled questions, each with the passage list of its variant (seeded)."""
    out = []
    for split, n in SPLITS:
        clean = load_nq_open(NQ, split, "clean", limit=n)
        corrupted = load_nq_open(NQ, split, "corrupted", limit=n)
        out += [(split, c, k) for c, k in zip(clean, corrupted)]
    can = [i for i, (_, _, k) in enumerate(out) if k.corrupted]
    rng = random.Random(0)
    pick = set(rng.sample(can, round(INSUFFICIENT_SHARE * len(out))))
    chosen = [(split, k if i in pick else c) for i, (split, c, k) in enumerate(out)]
    rng.shuffle(chosen)  # any prefix (--limit) is a random sample of the pool
    return chosen


def short_records() -> dict:
    with gzip.open(SHORT_SNAPSHOT, "rt", encoding="utf-8") as f:
        return {r["id"]: r for r in map(json.loads, f)}


def observe_key(item) -> str:
    from franq.apps.answering.prompts import AWF_HYPOTHESIS_VERSION, PRE_ANSWER_VERSION, SUFFICIENCY_LABEL_VERSION
    from franq.lm.prompts import FAITHFULNESS_VERSION
    return cache_key("answering-v1", item.id, list(item.passage_ids), PRE_ANSWER_VERSION, SUFFICIENCY_LABEL_VERSION,
                     AWF_HYPOTHESIS_VERSION, FAITHFULNESS_VERSION)


def autorater_key(item) -> str:
    from franq.apps.answering.prompts import SUFFICIENCY_AUTORATER_VERSION
    return cache_key("autorater-v1", item.id, list(item.passage_ids), SUFFICIENCY_AUTORATER_VERSION)


def observe(args) -> None:
    import torch

    torch.set_num_threads(1)
    from franq import CausalLM
    from franq.apps.answering.items import QAItem
    from franq.apps.answering.labelers import LocalLabeler
    from franq.apps.answering.sufficiency import AutoraterSufficiency, LabelSufficiency
    from franq.apps.answering.verify import ClosedBookFallback, NLICheck, PreAnswerCheck
    from franq.evidence.samples import SamplingOptions
    from franq.faithfulness.chat_judge import LMJudgeFaithfulness
    from franq.lm.chat import LocalChat

    lm = CausalLM.load(None, device="cpu")
    labeler = LocalLabeler(lm)
    judge = LMJudgeFaithfulness(lm)
    closed = ClosedBookFallback(lm)
    pre, nli = PreAnswerCheck(labeler), NLICheck(judge)
    label = {p: LabelSufficiency(labeler, prompt=p) for p in ("corrected", "verbatim")}
    cached = short_records()
    options = SamplingOptions(max_new_tokens=16)
    items = eval_items()[:args.limit]

    def one(item, full: bool) -> dict:
        rec = cached[short_key(item.id, item.passage_ids, options)]
        answer = rec["greedy"]["text"]
        t = time.perf_counter()
        prompt = lm.closed_book_prompt(item.question, instruction=closed.instruction)
        s = lm.sample(list(prompt.ids), 1, max_new_tokens=16, stop_at_newline=True, greedy_first=True).samples[0]
        qa = QAItem(item.question, item.passages, answer=answer or None, gold_answers=item.answers)
        out = {"closed_answer": s.text, "closed_token_logprobs": [round(x, 6) for x in s.token_logprobs],
               "pre_answer": float(pre.predict([qa])[0]),
               "suff_label": float(label["corrected"].rate([qa])[0])}
        if full:
            out["suff_label_verbatim"] = float(label["verbatim"].rate([qa])[0])
            out["nli_judge"] = float(nli.predict([qa])[0]) if answer.strip() else None
        out["seconds"] = round(time.perf_counter() - t, 3)
        return out

    CACHE.mkdir(parents=True, exist_ok=True)
    known = _snapshot()
    if args.autorater_limit:
        chat = LocalChat(lm)
        rater = AutoraterSufficiency(chat, timestamp="2018-12-31", max_tokens=args.autorater_tokens)

        def rate(item) -> dict:
            t = time.perf_counter()
            p = rater.rate([QAItem(item.question, item.passages)])[0]
            return {"autorater": float(p), "reply": rater.replies[0], "seconds": round(time.perf_counter() - t, 3)}
        todo = [(autorater_key(it), it) for _, it in items[:args.autorater_limit]]
        for _ in run_cached(str(CACHE / "autorater.jsonl"), todo, rate, known=known):
            pass

    # the first --full-limit questions get every signal; the rest the ones the tables need most
    # (the verbatim label prompt and the judge NLI cost ~2x the rest on a CPU)
    path = str(CACHE / "observe.jsonl")
    for todo, full in ((items[:args.full_limit], True), (items, False)):
        for _ in run_cached(path, [(observe_key(it), it) for _, it in todo], lambda it: one(it, full), known=known):
            pass

def _snapshot() -> dict:
    if not SNAPSHOT.exists():
        return {}
    with gzip.open(SNAPSHOT, "rt", encoding="utf-8") as f:
        return {r["id"]: r for r in map(json.loads, f)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    ob = sub.add_parser("observe", help="run the model passes the tables need (cached, resumable)")
    ob.add_argument("--limit", type=int, default=None, help="first N pooled questions (default: all 500)")
    ob.add_argument("--autorater-limit", type=int, default=0, help="CoT autorater on the first M questions")
    ob.add_argument("--full-limit", type=int, default=None,
                    help="verbatim label prompt and judge NLI on the first K questions only (default: all)")
    ob.add_argument("--autorater-tokens", type=int, default=256, help="longest autorater reply")
    sub.add_parser("snapshot", help=f"write the caches to {SNAPSHOT.relative_to(ROOT)} (for a fresh clone's report)")
    rp = sub.add_parser("report", help="tables, PNG and docs/answering.md from the caches")
    rp.add_argument("--n-boot", type=int, default=1000)
    rp.add_argument("--limit", type=int, default=None)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.command == "observe":
        observe(args)
    elif args.command == "snapshot":
        records = _snapshot()
        for name in ("observe.jsonl", "autorater.jsonl"):
            if (CACHE / name).exists():
                with open(CACHE / name, encoding="utf-8") as f:
                    records |= {r["id"]: r for r in map(json.loads, (line for line in f if line.endswith("\n")))}
        with gzip.open(SNAPSHOT, "wt", encoding="utf-8", compresslevel=9) as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records.values())
        print(f"wrote {len(records)} records to {SNAPSHOT.relative_to(ROOT)}")
    else:
        from eval_answering_report import report  # benchmarks/ is on sys.path when run as a script

        report(args)


if __name__ == "__main__":
    main()
