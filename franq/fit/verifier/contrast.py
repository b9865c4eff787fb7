"""Contrastive training pairs for the verifier (issue 44, item 1): every contradiction is a
minimal edit of one typed slot of a passage sentence, next to its supported twin (the same
sentence paraphrased, the same premise), and not-mentioned claims are about the same topic,
so that no surface cue (length, word overlap, position, a number, a negation) tells the label.

    python -m franq.fit.verifier.contrast --raw RAW --datasets datasets -o OUT.jsonl.gz

Sources, only the files of shared/data/SOURCES.md, never a held-out document:

``nq``        nq-open gold passages, less the test questions' (as :func:`data.build` does)
``expertqa``  evidence passages of datasets/expertqa/train.jsonl, less any passage of test.jsonl
``wice``      WiCE evidence pages of datasets/wice/fit.jsonl, less any page of heldout.jsonl
``snli``      SNLI premises (one sentence each; the long premises add other premises), less
              those of the SNLI dev pairs in datasets/verifier/dev/snli.jsonl

Per deciding sentence ``s`` of a passage (premise: a window of about 64 words around it):
``p`` = :func:`edits.paraphrase` of ``s`` (label 0, "supported") and each typed edit of ``p``
(label 1, :mod:`franq.fit.verifier.edits` names the kinds); ``p`` or an edit against the
window with ``s`` removed (``nm-removed``), another sentence of the same passage outside the
window (``nm-window``) or of a passage sharing a name (``nm-related``): label 2, never 1.
The supported twin carries its contradiction's ``kind``. ``layout`` says how the premise was
made: ``window``, ``long`` (the window and sentences of another passage, <= 120 words) or
``answer`` (an answer-sized claim joining two facts, each from its own sentence, against a
premise holding both or, for label 2, one of them). Dev is held apart by document (a hash
of its text), each split with its own entity pools and fillers.

:func:`franq.fit.verifier.balance.balance` then evens out the labels, per source and split,
within every cell of a cue-only model's predictions, so a cue-only classifier is near chance;
``benchmarks/bench_contrast_cues.py`` measures it.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from franq.fit.verifier.balance import balance
from franq.fit.verifier.data import CITATION_RE, detok, sentences, window_around, words
from franq.fit.verifier.edits import SWAP_TYPES, YEAR_RE, edits, generalize, paraphrase, proper_spans

WINDOW_WORDS = 64
LONG_WORDS = 120
DEV_SHARE = 8  # percent of documents
CONTRA_PER_SENTENCE = 3
JUNK_RE = re.compile(r"[a-z]{3}[A-Z][a-z]|[a-z]\.[A-Z][a-z]|\bet al\.$")  # "StoryAugust", "success.Flexible"
SOURCES = ("nq", "expertqa", "wice", "snli")
IMPERATIVE = frozenset("join click read sign subscribe see learn find get contact share follow download visit "
                       "call email please register log check view browse shop order buy try explore discover".split())
NM_ADDED = 3
TAILS = ("for the first time", "in the early morning", "during the summer", "at night", "on a weekend",
         "after a long delay", "with the help of volunteers", "as a result of the protests", "for a second time",
         "during a heavy storm", "at the request of the government", "despite strong opposition")
ADVERBS = ("officially", "publicly", "initially", "formally", "jointly", "originally", "deliberately", "secretly")


# ------------------------------------------------------------------ documents
def clean(sent: str) -> bool:
    """A sentence fit to be a premise line: prose, not a menu, a URL or a title run."""
    toks = sent.split()
    if not 3 <= len(toks) <= 60 or "http" in sent or "|" in sent or "@" in sent:
        return False
    alpha = sum(t.strip(".,;:()\"'").isalpha() for t in toks) / len(toks)
    caps = sum(t[:1].isupper() for t in toks) / len(toks)
    return alpha >= 0.7 and caps <= 0.6


def decides(sent: str) -> bool:
    """A sentence fit to be a claim: 6-40 words, a capital first, a full stop last."""
    return (6 <= len(sent.split()) <= 40 and sent[:1].isupper() and sent[-1:] in ".!?" and clean(sent)
            and sent.split()[0].lower() not in IMPERATIVE and not JUNK_RE.search(sent))


def held_out(key: str) -> bool:
    return int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) % 100 < DEV_SHARE


def documents(raw: Path, datasets: Path) -> dict[str, list[list[str]]]:
    """{source: passages as lists of clean sentences}, held-out documents left out."""
    from franq.fit.verifier.qa import nq_rows

    read = lambda p: [json.loads(x) for x in open(p, encoding="utf-8")]  # noqa: E731, SIM115
    test_ids = {r["id"] for r in read(datasets / "nq-open" / "test.jsonl")}
    rows = nq_rows(raw)
    test_passages = {r["passage"] for r in rows if r["id"] in test_ids}
    nq = [r["passage"] for r in rows if r["id"] not in test_ids and r["passage"] not in test_passages]
    eqa_test = {p["text"] for rec in read(datasets / "expertqa" / "test.jsonl") for p in rec["passages"]}
    eqa = [CITATION_RE.sub("", p["text"]) for rec in read(datasets / "expertqa" / "train.jsonl")
           for p in rec["passages"] if p["text"] not in eqa_test]
    fit_ids = {r["id"] for r in read(datasets / "wice" / "fit.jsonl")}
    held_ids = {r["id"] for r in read(datasets / "wice" / "heldout.jsonl")}
    items = [json.loads(x) for x in open(raw / "wice_claim_dev.jsonl", encoding="utf-8")]
    held_pages = {" ".join(r["evidence"]) for r in items if f"wice-{r['meta']['id']}" in held_ids}
    wice = [r["evidence"] for r in items if f"wice-{r['meta']['id']}" in fit_ids
            and " ".join(r["evidence"]) not in held_pages]
    snli_dev = datasets / "verifier" / "dev" / "snli.jsonl"  # the committed SNLI dev pairs' premises stay out
    snli_held = {r["premise"] for r in read(snli_dev)} if snli_dev.is_file() else set()
    with gzip.open(raw / "snli_dev_test.jsonl.gz", "rt", encoding="utf-8") as f:
        snli = {detok(json.loads(x)["premise"]) for x in f} - snli_held
    docs = {"nq": [sentences(t) for t in dict.fromkeys(nq)], "expertqa": [sentences(t) for t in dict.fromkeys(eqa)],
            "wice": [[s.strip() for s in ev] for ev in {tuple(e): 0 for e in wice}],
            "snli": [[s] for s in sorted(snli)]}
    return {name: [kept for d in ds if (kept := [s for s in d if clean(s)])] for name, ds in docs.items()}


def ner():
    """franq's spaCy pipeline with only what NER needs; None when none is installed."""
    from franq.fit.verifier.corrupt import tagger

    nlp = tagger()
    if nlp is not None and "tok2vec" in nlp.pipe_names:
        nlp.select_pipes(enable=["tok2vec", "ner"])
    return nlp


def entity_spans(texts: list[str], nlp=None) -> dict[str, list[tuple[int, int, str]]]:
    """Each text's entities (spaCy's NER when ``nlp`` is given, else :func:`proper_spans`)."""
    if nlp is None:
        return {t: proper_spans(t) for t in texts}
    return {t: [(e.start_char, e.end_char, e.label_) for e in doc.ents if e.label_ in SWAP_TYPES]
            for t, doc in zip(texts, nlp.pipe(texts, batch_size=256))}


def joined(a: str, b: str, rng: random.Random) -> str:
    """Two sentences said as one answer-sized claim."""
    low = b[:1].lower() + b[1:] if b.split()[0].lower() in ("the", "it", "this", "a", "an", "these", "its") else b
    form = rng.randrange(3)
    if form == 0:
        return f"{a.rstrip('.!?')}, and {low}"
    return f"{a.rstrip('.!?')}; {low}" if form == 1 else f"{a} {b}"


# ------------------------------------------------------------------ pairs
class Builder:
    """The pairs of one source and split (its own entity pool, fillers and random stream)."""

    def __init__(self, docs: list[list[str]], ents: dict, source: str, rng: random.Random, *,
                 added_places: bool = True):
        self.docs, self.ents, self.source, self.rng = docs, ents, source, rng
        self.added_places = added_places  # False: no "... in <place>." not-mentioned claims (no draw for them)
        self.out: list[dict] = []
        self.kinds: Counter = Counter()
        self.pool: dict[str, list[str]] = defaultdict(list)
        self.by_name: dict[str, list[int]] = defaultdict(list)
        for d, sents in enumerate(docs):
            for s in sents:
                for a, b, label in ents.get(s, ()):
                    self.pool[label].append(s[a:b])
                    if len(self.by_name[s[a:b].lower()]) < 50:
                        self.by_name[s[a:b].lower()].append(d)
        self.pool = {k: sorted(set(v)) for k, v in self.pool.items()}

    def add(self, premise: list[str] | str, claim: str, label: int, kind: str, layout: str) -> None:
        premise = premise if isinstance(premise, str) else " ".join(premise)
        self.out.append({"premise": premise, "claim": claim, "label": label, "source": self.source, "kind": kind,
                         "layout": layout})

    def related(self, d: int, text: str) -> list[str]:
        """Sentences of another passage naming an entity of ``text`` (else of a random one)."""
        names = [text[a:b].lower() for a, b, _ in self.ents.get(text, ())]
        docs = [e for n in names for e in self.by_name.get(n, ()) if e != d]
        e = self.rng.choice(docs) if docs else self.rng.randrange(len(self.docs))
        return self.docs[e] if e != d else []

    def long(self, d: int, block: list[str], anchor: str) -> tuple[list[str], str]:
        """``block`` with sentences of a related passage before or after it, <= LONG_WORDS."""
        other = self.related(d, anchor)
        if not other:
            return block, "window"
        start = self.rng.randrange(len(other))
        n = sum(len(s.split()) for s in block)
        fill = []
        for s in other[start:] + other[:start]:
            if n + len(s.split()) > LONG_WORDS:
                break
            if words(s) & words(anchor) and len(words(s) & words(anchor)) >= 0.5 * len(words(anchor)):
                continue  # could decide the claim
            fill.append(s)
            n += len(s.split())
        if not fill:
            return block, "window"
        return (fill + block, "long") if self.rng.random() < 0.5 else (block + fill, "long")

    def premise(self, d: int, block: list[str], anchor: str) -> tuple[list[str], str]:
        return self.long(d, block, anchor) if self.rng.random() < 0.35 else (block, "window")

    def claim_edits(self, s: str, p: str, window_sents: list[str]) -> list[tuple[str, str]]:
        spans = []
        for a, b, label in self.ents.get(s, ()):
            at = p.find(s[a:b])
            if at >= 0:
                spans.append((at, at + b - a, label))
        window = defaultdict(list)
        for w in window_sents:
            for a, b, label in self.ents.get(w, ()):
                if w[a:b].lower() not in s.lower():
                    window[label].append(w[a:b])
        window["TEXT"] = window_sents
        found = edits(p, sorted(spans), window, self.pool, self.rng)
        # the rarest kinds first, so every kind gets its share
        self.rng.shuffle(found)
        found.sort(key=lambda ke: self.kinds[ke[0]])
        return found

    def sentence(self, d: int, k: int) -> None:
        sents, rng = self.docs[d], self.rng
        s = sents[k]
        i, j = window_around(sents, k, WINDOW_WORDS, rng)
        block = sents[i:j]
        p, _ = paraphrase(s, rng)
        found = self.claim_edits(s, p, [w for w in block if w != s])
        for kind, c in found[:CONTRA_PER_SENTENCE]:
            self.kinds[kind] += 1
            premise, layout = self.premise(d, block, s)
            self.add(premise, p, 0, kind, layout)
            self.add(premise, c, 1, kind, layout)
        state = rng.random()
        right, wrong = generalize(p, random.Random(state)), generalize(p, random.Random(state), wrong=True)
        if right and wrong and right != wrong:
            premise, layout = self.premise(d, block, s)
            self.add(premise, right[1], 0, right[0], layout)
            self.add(premise, wrong[1], 1, right[0], layout)
        if not found:
            return
        # not mentioned: the deciding sentence removed, or a fact of the window's topic from elsewhere
        rest = [w for w in block if w != s and len(words(w) & words(p)) < 0.5 * max(1, len(words(p)))]
        if rest and len(rest) == len(block) - 1:
            claim = p if rng.random() < 0.5 else rng.choice(found)[1]
            premise, layout = self.premise(d, rest, s)
            self.add(premise, claim, 2, "nm-removed", layout)
        topic = words(" ".join(block))
        outside = [w for x, w in enumerate(sents) if not i <= x < j and decides(w) and words(w) & topic]
        far = [w for w in self.related(d, s) if decides(w)]
        for kind, cands in (("nm-window", outside), ("nm-related", far)):
            cands = [w for w in cands if not any(len(words(w) & words(b)) >= 0.5 * len(words(w)) for b in block)]
            if cands and rng.random() < 0.6:
                premise, layout = self.premise(d, block, s)
                other = paraphrase(rng.choice(cands), rng)[0]
                if rng.random() < 0.5 and len(p.split()) + len(other.split()) <= 45:
                    other, layout = joined(p, other, rng), "answer"  # one fact said, one not
                self.add(premise, other, 2, kind, layout)
        for added in self.added(p, " ".join(block))[:NM_ADDED]:
            self.add(block, added, 2, "nm-added", "window")
            premise, layout = self.long(d, block, s)
            if layout == "long":
                self.add(premise, added, 2, "nm-added", layout)
        if rng.random() < 0.35:
            self.answer(d, k, block, i, j, p, found)

    def added(self, p: str, block: str) -> list[str]:
        """``p`` with a detail the premise does not give: a year where it names none, a place
        where it names none, a manner adverb or a circumstance: not mentioned, though nearly
        every word is in the premise."""
        rng, end = self.rng, p[-1:] if p[-1:] in ".!?" else ""
        body = p[:-1] if end else p
        out = []
        if not YEAR_RE.search(block) and self.source != "snli":
            out.append(f"{body} in {rng.randint(1850, 2022)}{end}")
        places = self.pool.get("GPE", []) if self.added_places else []
        named = {label for x in sentences(block) for _, _, label in self.ents.get(x, ())}
        if places and not named & {"GPE", "LOC"}:
            place = rng.choice(places)
            out += [] if place.lower() in block.lower() else [f"{body} in {place}{end}"]
        m = re.search(r"\b(?:is|are|was|were|has been|have been|had been)\b (?=\w+(?:ed|en)\b)", p)
        if m:
            out.append(p[:m.end()] + rng.choice(ADVERBS) + " " + p[m.end():])
        tail = rng.choice(TAILS)
        if not words(tail) & words(block):
            out.append(f"{body} {tail}{end}")
        rng.shuffle(out)
        return out

    def answer(self, d: int, k: int, block: list[str], i: int, j: int, p: str, found: list) -> None:
        """Two facts in one claim: both in the premise (0), one edited (1), one absent (2)."""
        sents, rng = self.docs[d], self.rng
        others = [x for x in range(len(sents)) if x != k and decides(sents[x]) and len(sents[x].split()) <= 25]
        if not others or len(p.split()) > 25:
            return
        k2 = rng.choice(others)
        p2, _ = paraphrase(sents[k2], rng)
        said = lambda a, b: joined(a, b, random.Random(join))  # noqa: E731  one form for the three
        join = rng.random()
        near = [sents[k], sents[k2]]
        n = sum(len(x.split()) for x in near)
        for x in sents[i:j]:
            if x not in near and n + len(x.split()) <= LONG_WORDS:
                near.append(x)
                n += len(x.split())
        order = sorted(near, key=sents.index)
        kind, bad = found[0]
        first = rng.random() < 0.5
        pair = (p, p2) if first else (p2, p)
        edited = (bad, p2) if first else (p2, bad)
        self.add(order, said(*pair), 0, kind, "answer")
        self.add(order, said(*edited), 1, kind, "answer")
        rest = [x for x in order if x != sents[k2] and len(words(x) & words(p2)) < 0.5 * max(1, len(words(p2)))]
        if rest and sents[k] in rest:
            self.add(rest, said(*pair), 2, "nm-removed", "answer")
        for added in self.added(said(*pair), " ".join(order))[:1]:
            self.add(order, added, 2, "nm-added", "answer")

    def build(self, per_doc: int) -> list[dict]:
        order = list(range(len(self.docs)))
        self.rng.shuffle(order)
        for d in order:
            ks = [k for k, s in enumerate(self.docs[d]) if decides(s)]
            for k in self.rng.sample(ks, min(per_doc, len(ks))):
                self.sentence(d, k)
        return self.out


# ------------------------------------------------------------------ public entry
def contrastive_pairs(raw: Path, datasets: Path, *, seed: int = 0, n_per_source: dict | None = None,
                      docs: dict[str, list[list[str]]] | None = None, nlp="spacy",
                      per_doc: dict[str, int] | None = None, balanced: bool = True,
                      ents: dict | None = None, added_places: bool = True) -> dict[str, list[dict]]:
    """{"train": pairs, "dev": pairs}, label-balanced per cue cell, per source and split.
    ``n_per_source``: caps on each source's training pairs (dev: a tenth of it);
    ``docs``: {source: passages as sentence lists} instead of the files (tests);
    ``nlp``: a spaCy pipeline with NER, "spacy" for franq's tagger, None for capitalized runs;
    ``balanced=False``: every pair made (what the cue benchmark compares with); ``ents``: the
    sentences' entities as :func:`entity_spans` gives them (computed when None);
    ``added_places=False``: none of the not-mentioned claims that append a place of the pool
    ("... in Austria."), whose surface is far from natural claims (the v9 recipe)."""
    if docs is None:
        docs = documents(Path(raw), Path(datasets))
    per_doc = {"nq": 8, "expertqa": 8, "wice": 60, "snli": 1} | (per_doc or {})
    if ents is None:
        texts = sorted({s for ds in docs.values() for d in ds for s in d})
        ents = entity_spans(texts, ner() if nlp == "spacy" else nlp)
    out: dict[str, list[dict]] = {"train": [], "dev": []}
    for source in sorted(docs):
        parts = {"train": [], "dev": []}
        for d in docs[source]:
            parts["dev" if held_out(source + "\n" + " ".join(d)) else "train"].append(d)
        for split, ds in parts.items():
            if not ds:
                continue
            rng = random.Random(f"{seed}:{source}:{split}")
            pairs = Builder(ds, ents, source, rng, added_places=added_places).build(per_doc.get(source, 4))
            pairs = balance(pairs, rng) if balanced else pairs
            cap = (n_per_source or {}).get(source)
            if cap is not None:
                pairs = pairs[: cap if split == "train" else max(1, cap // 10)]
            out[split].extend(pairs)
    return out


def counts(pairs: list[dict]) -> str:
    """Per source, kind and label, as lines of text."""
    table = Counter((p["source"], p["kind"], p["label"]) for p in pairs)
    lines = []
    for source in sorted({p["source"] for p in pairs}):
        for kind in sorted({k for s, k, _ in table if s == source}):
            row = [table[(source, kind, label)] for label in range(3)]
            lines.append(f"{source:10s} {kind:16s} " + " ".join(f"{n:7d}" for n in row))
    by_label = Counter(p["label"] for p in pairs)
    lines.append(f"{'all':10s} {'':16s} " + " ".join(f"{by_label[x]:7d}" for x in range(3)))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m franq.fit.verifier.contrast", description=__doc__.split("\n\n")[0])
    ap.add_argument("--raw", type=Path, required=True, help="shared/data/raw (SOURCES.md's files)")
    ap.add_argument("--datasets", type=Path, default=Path("datasets"), help="franq's datasets folder (held-out splits)")
    ap.add_argument("-o", "--output", type=Path, required=True, help="pairs, one JSON a line (.gz: gzipped)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-ner", action="store_true", help="capitalized word runs as entities (no spaCy)")
    args = ap.parse_args(argv)
    for name in ("raw", "datasets"):
        if not getattr(args, name).is_dir():
            print(f"error: --{name} {getattr(args, name)} is not a folder", file=sys.stderr)
            return 2
    start = time.time()
    sets = contrastive_pairs(args.raw, args.datasets, seed=args.seed, nlp=None if args.no_ner else "spacy")
    opener = gzip.open if args.output.suffix == ".gz" else open
    with opener(args.output, "wt", encoding="utf-8") as f:
        for split, pairs in sets.items():
            for p in pairs:
                f.write(json.dumps({**p, "split": split}, ensure_ascii=False) + "\n")
    for split, pairs in sets.items():
        print(f"== {split}: {len(pairs)} pairs (source, kind, supported / contradicted / not mentioned)")
        print(counts(pairs))
    print(f"wrote {args.output} in {time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
