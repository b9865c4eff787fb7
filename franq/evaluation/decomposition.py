"""Decomposition quality on ExpertQA: the offline sentence splitter vs the LLM decomposer.

For each answer (``answer_string``) with human-written claims (``claims[].claim_string``):

    claims/answer    produced claims (all / check-worthy)
    human recall     share of human claims matched by a produced check-worthy claim
    precision        share of produced check-worthy claims that match some human claim
    aligned          share of produced check-worthy claims aligned to answer tokens
                     (embedded SmolLM2 tokenizer offsets)

A produced claim matches a human claim when the F1 of their normalized content-word
bags is >= 0.5. The LLM decomposer runs on a fixed-seed sample (it is slow on a shared
CPU); the sentence splitter runs on the same sample and on all answers. Replies are
cached under --cache-dir, so a rerun only pays for answers not done yet.

    franq bench decompose --sample 30 --out benchmarks/results/decomposition.json
"""
from __future__ import annotations

import glob
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path


from claims.align import align_claims
from claims.decompose import SentenceDecomposer
from claims.text import content_words
from franq.evaluation.data import raw_data_dir


def load_expertqa(raw: Path) -> list[dict]:
    rows, seen = [], set()
    for path in sorted(glob.glob(str(raw / "expertqa_*.jsonl"))):
        with open(path, encoding="utf-8") as f:
            for line in f:
                obj = json.loads(line)
                for system, ans in sorted((obj.get("answers") or {}).items()):
                    text = (ans or {}).get("answer_string") or ""
                    human = [c.get("claim_string") for c in ans.get("claims") or [] if c.get("claim_string")]
                    if text.strip() and human and text not in seen:
                        seen.add(text)
                        rows.append({"question": obj["question"], "system": system, "answer": text,
                                     "human": human})
    return rows


def f1(a: list[str], b: list[str]) -> float:
    ca, cb = Counter(a), Counter(b)
    common = sum((ca & cb).values())
    if not common:
        return 0.0
    p, r = common / sum(ca.values()), common / sum(cb.values())
    return 2 * p * r / (p + r)


def evaluate(rows, decompositions, lm, threshold: float) -> dict:
    n_claims = n_worthy = n_aligned = n_match_prod = 0
    n_human = n_human_matched = 0
    coverage = 0.0
    fallbacks = calls = ptok = ctok = 0
    for row, dec in zip(rows, decompositions):
        ids, offsets = lm.encode_answer(row["answer"])
        claims = align_claims(row["answer"], list(dec.claims), offsets, ids)
        worthy = [c for c in claims if c.check_worthy]
        n_claims += len(claims)
        n_worthy += len(worthy)
        n_aligned += sum(c.is_aligned for c in worthy)
        prod = [content_words(c.text) for c in worthy]
        hum = [content_words(h) for h in row["human"]]
        n_human += len(hum)
        n_human_matched += sum(any(f1(h, p) >= threshold for p in prod) for h in hum)
        n_match_prod += sum(any(f1(h, p) >= threshold for h in hum) for p in prod)
        for h in hum:  # atomic claims inside a human claim, together, cover how much of it
            inside = {w for p in prod if p and sum(w in set(h) for w in p) >= 0.5 * len(p) for w in p}
            coverage += len(set(h) & inside) / max(len(set(h)), 1)
        fallbacks += dec.usage.fallbacks
        calls += dec.usage.calls
        ptok += dec.usage.prompt_tokens
        ctok += dec.usage.completion_tokens
    n = max(len(rows), 1)
    return {
        "answers": len(rows), "claims_per_answer": n_claims / n, "check_worthy_per_answer": n_worthy / n,
        "human_claims_per_answer": n_human / n,
        "human_recall": n_human_matched / max(n_human, 1), "precision": n_match_prod / max(n_worthy, 1),
        "human_word_coverage": coverage / max(n_human, 1),
        "aligned": n_aligned / max(n_worthy, 1), "fallback_rate": fallbacks / n,
        "calls": calls, "prompt_tokens": ptok, "completion_tokens": ctok,
    }


def run(*, raw: Path | None = None, sample: int = 30, seed: int = 0, threshold: float = 0.5, max_tokens: int = 384,
        cache_dir: Path = Path("benchmarks/cache/decompose"), max_seconds: float | None = None,
        limit: int | None = None, no_llm: bool = False, out: Path | None = None, md: Path | None = None) -> dict:
    """The report (printed as JSON; written to ``out`` and, as a markdown table, to ``md`` when given)."""
    from franq.lm import CausalLM
    from franq.lm.chat import LocalChat

    rows = load_expertqa(raw_data_dir(raw))
    sample_rows = random.Random(seed).sample(rows, min(sample, len(rows)))
    lm = CausalLM.load()
    sentence = SentenceDecomposer()
    report = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "answers_total": len(rows),
              "sample": len(sample_rows), "seed": seed, "threshold": threshold, "results": {}}
    t = time.perf_counter()
    report["results"]["sentence (all answers)"] = evaluate(rows, sentence.decompose_many([r["answer"] for r in rows]),
                                                           lm, threshold)
    report["results"]["sentence (all answers)"]["seconds_per_answer"] = (time.perf_counter() - t) / len(rows)
    done = sample_rows
    if not no_llm:
        from claims.llm_decompose import LLMDecomposer

        llm = LLMDecomposer(LocalChat(lm, response_prefix='["'), cache_dir=cache_dir,
                            max_tokens=max_tokens, concurrency=1)
        decs, t = [], time.perf_counter()
        for i, row in enumerate(sample_rows[:limit]):
            if max_seconds is not None and time.perf_counter() - t > max_seconds:
                break
            decs.append(llm.decompose_report(row["answer"]))
            print(f"[{i + 1}/{len(sample_rows)}] {time.perf_counter() - t:.0f}s method={decs[-1].method}",
                  file=sys.stderr, flush=True)
        elapsed = time.perf_counter() - t
        done = sample_rows[:len(decs)]
        res = evaluate(done, decs, lm, threshold)
        res["seconds_per_answer"] = elapsed / max(len(decs), 1)
        res["cache_hits"] = sum(d.usage.cache_hits for d in decs)
        report["results"]["llm, embedded SmolLM2-135M (sample)"] = res
    t = time.perf_counter()
    report["results"]["sentence (sample)"] = evaluate(done, sentence.decompose_many([r["answer"] for r in done]),
                                                 lm, threshold)
    report["results"]["sentence (sample)"]["seconds_per_answer"] = (time.perf_counter() - t) / max(len(done), 1)
    text = json.dumps(report, indent=2)
    print(text)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", encoding="utf-8")
    if md:
        md.parent.mkdir(parents=True, exist_ok=True)
        md.write_text(markdown_table(report), encoding="utf-8")
    return report


COLUMNS = [("answers", "answers", "{:d}"), ("claims_per_answer", "claims/answer", "{:.2f}"),
           ("check_worthy_per_answer", "check-worthy/answer", "{:.2f}"),
           ("human_claims_per_answer", "human claims/answer", "{:.2f}"),
           ("human_recall", "human claims matched (F1>=0.5)", "{:.1%}"),
           ("human_word_coverage", "human claim words covered", "{:.1%}"),
           ("precision", "produced claims matching a human claim", "{:.1%}"),
           ("aligned", "produced claims aligned to tokens", "{:.1%}"),
           ("fallback_rate", "answers fell back", "{:.1%}"),
           ("seconds_per_answer", "s/answer", "{:.2f}")]


def markdown_table(report: dict) -> str:
    head = "| method | " + " | ".join(c[1] for c in COLUMNS) + " |"
    lines = [head, "|" + "---|" * (len(COLUMNS) + 1)]
    for name, res in report["results"].items():
        lines.append(f"| {name} | " + " | ".join(fmt.format(res[key]) for key, _, fmt in COLUMNS) + " |")
    return "\n".join(lines) + "\n"

