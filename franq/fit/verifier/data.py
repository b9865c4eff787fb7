"""Training and dev pairs for franq's verifier: (premise window, claim) -> supported /
contradicted / not mentioned, built only from the files in shared/data/SOURCES.md and
synthetic claims made from their passages.

Sources (each with its own dev split, reported separately):

``snli``        SNLI dev+test three-way pairs (general-domain NLI); dev = 1,500 of SNLI dev.
``synthetic``   claims made from real passages (nq-open gold passages, ExpertQA evidence,
                WiCE pages): a passage sentence or one of its atomic claims (franq's atomic
                decomposer) -> supported; the same claim with one typed substitution (a
                same-type entity from spaCy's NER, a number, a year, a negation, a WordNet
                antonym) -> contradicted; the claim against its window with the sentence
                removed, or a sentence of a related passage -> not mentioned. Dev: the
                nq-open test questions' passages and the ExpertQA rand_test passages.
``nq-qa``       "question answer" statements (franq's short-form statement) against the gold
                passage: the gold answer -> supported, another question's answer of the same
                entity type -> contradicted, the gold answer against another question's
                passage -> not mentioned. Dev: nq-open test questions.
``expertqa``    human support labels of ExpertQA claims (rand_val + domain_val): Complete ->
                supported, Missing / Incomplete / Partial -> not mentioned (ExpertQA has no
                contradiction label), premise = the answer's window that shares most words
                with the claim; ``[n]`` citation markers stripped. Dev: rand_test.
``wice``        WiCE dev claims in datasets/wice/fit.jsonl: supported -> the window with its
                supporting sentences; partially / not supported -> not mentioned. Dev: the
                held-out 40% (datasets/wice/heldout.jsonl), scored over whole pages.

The manifest (datasets/verifier/manifest*.json) sets how many pairs of each source, the
window size, ``"rng"`` and two ``"augment"`` switches: ``declarative_qa`` (``nq-declarative``
training pairs, :mod:`franq.fit.verifier.qa`), ``paraphrased_contradictions``
(``expertqa-contradicted``) and ``window_entity_swap`` (a share of the synthetic
contradictions take an entity the window names elsewhere). :data:`AUGMENT` lists them; a
manifest with any other switch is refused.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import random
import re
from collections import defaultdict
from pathlib import Path

from franq.errors import InputError
from franq.fit.verifier.corrupt import Corruptor, tagger

LABELS = ("supported", "contradicted", "not_mentioned")
AUGMENT = ("declarative_qa", "paraphrased_contradictions", "window_entity_swap")
"""The manifest's ``"augment"`` switches (those of the shipped recipes, manifest.json and
manifest-v7.json)."""
SOURCES = ("snli", "synthetic", "nq-qa", "nq-declarative", "expertqa", "expertqa-contradicted", "wice")
"""The training sources a manifest may cap (``train_pairs``)."""
SNLI_LABELS = {"entailment": 0, "contradiction": 1, "neutral": 2}
CITATION_RE = re.compile(r"\s*\[\d+(?:[,\s]*\d+)*\]")
SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
WORD_RE = re.compile(r"\w+")
STOP = frozenset("a an the of in on at to for by with and or is are was were be been it its this that as "
                 "from which who what when where how he she they his her their has have had not".split())


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def detok(text: str) -> str:
    """SNLI is published space-tokenized: 'packages . ' -> 'packages.'."""
    text = re.sub(r"\s+([.,!?;:')])", r"\1", text.strip())
    return re.sub(r"([(])\s+", r"\1", text).replace(" n't", "n't").replace(" 's", "'s")


def words(text: str) -> set[str]:
    return {w for w in WORD_RE.findall(text.lower()) if w not in STOP and len(w) > 1}


def overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / max(1, min(len(a), len(b)))


def sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_RE.split(text.strip()) if s.strip()]


def windows(sents: list[str], window_words: int, overlap_sents: int = 1) -> list[tuple[int, int]]:
    """Sentence ranges [i, j) of about ``window_words`` words, consecutive windows sharing
    ``overlap_sents`` sentences (the verifier's windowing at inference)."""
    out, i = [], 0
    while i < len(sents):
        j, n = i, 0
        while j < len(sents) and (j == i or n + len(sents[j].split()) <= window_words):
            n += len(sents[j].split())
            j += 1
        out.append((i, j))
        if j >= len(sents):
            break
        i = max(i + 1, j - overlap_sents)
    return out


def window_around(sents: list[str], k: int, window_words: int, rng: random.Random) -> tuple[int, int]:
    """A window of whole sentences containing sentence ``k``, placed at random around it."""
    i = j = k
    n = len(sents[k].split())
    while True:
        grow = [side for side, ok in (("left", i > 0), ("right", j + 1 < len(sents))) if ok]
        if not grow:
            break
        side = rng.choice(grow)
        m = len(sents[i - 1 if side == "left" else j + 1].split())
        if n + m > window_words:
            break
        n += m
        i, j = (i - 1, j) if side == "left" else (i, j + 1)
    return i, j + 1


class RelatedPassages:
    """Passages indexed by their first 30 content words (sorted): the "related passage" of a
    text is one that shares a word with it (a not-mentioned claim from the same topic)."""

    def __init__(self, docs: list[list[str]]):
        self.by_word = defaultdict(list)
        for d, sents in enumerate(docs):
            for w in sorted(words(" ".join(sents)))[:30]:
                self.by_word[w].append(d)

    def of(self, text: str, d: int) -> list[int]:
        """Up to 200 passages (with repeats, as found) sharing a word with ``text``, never ``d``."""
        return [e for w in sorted(words(text)) for e in self.by_word.get(w, ()) if e != d][:200]


# ----------------------------------------------------------------- builders
def synthetic_pairs(docs: list[list[str]], *, n: int, window_words: int, nlp, decomposer, corruptor: Corruptor,
                    rng: random.Random, source: str, window_swap: float = 0.0) -> list[dict]:
    """``n`` (about) balanced pairs from passages given as lists of sentences, a random
    sentence of each passage. ``window_swap``: the share of contradicted claims whose
    substitute is an entity the window names elsewhere (:meth:`Corruptor.from_window`), when
    it names one."""
    out: list[dict] = []
    related = RelatedPassages(docs)
    order = [d for d, s in enumerate(docs) if s]
    rng.shuffle(order)
    for d in order:
        if len(out) >= n:
            break
        sents = docs[d]
        k = rng.randrange(len(sents))
        sent = sents[k]
        if not 6 <= len(sent.split()) <= 45:
            continue
        claim = sent
        if decomposer is not None and rng.random() < 0.5:
            parts = [c.text for c in decomposer.decompose(sent) if len(c.text.split()) >= 4]
            claim = rng.choice(parts) if parts else sent
        i, j = window_around(sents, k, window_words, rng)
        premise = " ".join(sents[i:j])
        out.append({"premise": premise, "claim": claim, "label": 0, "source": source, "how": "sentence"})
        doc = nlp(claim)
        bad = None
        if window_swap and rng.random() < window_swap:  # off: no draw, so the stream is as before
            swapped = corruptor.from_window(claim, doc, nlp(premise), sent)
            bad = (swapped, "window-entity") if swapped else None
        bad = bad or corruptor.corrupt(claim, doc)
        if bad:
            out.append({"premise": premise, "claim": bad[0], "label": 1, "source": source, "how": bad[1]})
        rest = [s for x, s in enumerate(sents[i:j], i) if x != k and overlap(words(s), words(claim)) < 0.5]
        if rng.random() < 0.5 and len(rest) >= 1:
            out.append({"premise": " ".join(rest), "claim": claim, "label": 2, "source": source, "how": "removed"})
        else:
            near = related.of(claim, d)
            if near:
                other = docs[rng.choice(near)]
                cand = [s for s in other if 6 <= len(s.split()) <= 45
                        and overlap(words(s), words(premise)) < 0.5]
                if cand:
                    out.append({"premise": premise, "claim": rng.choice(cand), "label": 2, "source": source,
                                "how": "related"})
    return out


def snli(raw: Path, rng: random.Random, *, n_dev: int = 1500) -> tuple[list[dict], list[dict]]:
    rows = [json.loads(line) for line in gzip.open(raw / "snli_dev_test.jsonl.gz", "rt", encoding="utf-8")]
    rows = [r for r in rows if r["label"] in SNLI_LABELS]
    dev_pool = [r for r in rows if r["split"] == "dev"]
    rng.shuffle(dev_pool)
    dev_ids = {id(r) for r in dev_pool[:n_dev]}
    pairs = lambda rs: [{"premise": detok(r["premise"]), "claim": detok(r["hypothesis"]),  # noqa: E731
                         "label": SNLI_LABELS[r["label"]], "source": "snli", "how": "snli"} for r in rs]
    return pairs([r for r in rows if id(r) not in dev_ids]), pairs(dev_pool[:n_dev])


def best_window(passages: list[str], claim: str, window_words: int) -> str:
    cw = words(claim)
    best, score = "", -1.0
    for text in passages:
        sents = sentences(text)
        for i, j in windows(sents, window_words):
            w = " ".join(sents[i:j])
            s = overlap(cw, words(w))
            if s > score:
                best, score = w, s
    return best


def labelled_claims(source: Path | list[dict], name: str, window_words: int) -> list[dict]:
    """ExpertQA / WiCE franq records (a file or the records) with ``is_faithful`` labels ->
    binary pairs (supported / not mentioned) against the claim's best window."""
    from franq.fit.generations import read_jsonl

    out = []
    for rec in source if isinstance(source, list) else read_jsonl(source):
        passages = [p["text"] for p in rec["passages"]]
        for c in rec["claims"]:
            if c.get("is_faithful") is None:
                continue
            claim = CITATION_RE.sub("", c["text"]).strip()
            out.append({"premise": best_window(passages, claim, window_words), "claim": claim,
                        "label": 0 if c["is_faithful"] else 2, "source": name, "how": "human",
                        "passages": passages, "id": rec["id"]})
    return out


def paraphrased_contradictions(pairs: list[dict], corruptor: Corruptor) -> list[dict]:
    """Contradicted pairs whose claim is not a copy of the premise: each human-labelled
    supported claim (an answer's paraphrase of its passage) with one typed substitution,
    against the same window. Synthetic substitutions into passage sentences teach a
    near-copy with one change; these teach the same fact said in other words."""
    out = []
    for p in pairs:
        if p["label"] != 0:
            continue
        bad = corruptor.corrupt(p["claim"])
        if bad:
            out.append({"premise": p["premise"], "claim": bad[0], "label": 1, "source": "expertqa-contradicted",
                        "how": bad[1]})
    return out


def wice_supported_windows(raw: Path, ids: set[str], window_words: int) -> list[dict]:
    """WiCE fit items with their supporting sentences as the premise (supported) and the
    best window for partially / not supported ones (not mentioned)."""
    out = []
    for line in open(raw / "wice_claim_dev.jsonl", encoding="utf-8"):
        r = json.loads(line)
        if f"wice-{r['meta']['id']}" not in ids:
            continue
        ev = r["evidence"]
        if r["label"] == "supported" and r["supporting_sentences"]:
            group = sorted(set(r["supporting_sentences"][0]))
            lo, hi = max(0, group[0] - 1), min(len(ev), group[-1] + 2)
            premise = " ".join(ev[lo:hi])
            if len(premise.split()) > 2 * window_words:
                premise = " ".join(ev[i] for i in group)
            out.append({"premise": premise, "claim": r["claim"], "label": 0, "source": "wice", "how": "human"})
        else:
            out.append({"premise": best_window([" ".join(ev)], r["claim"], window_words), "claim": r["claim"],
                        "label": 2, "source": "wice", "how": "human"})
    return out


def check_manifest(manifest: dict) -> None:
    """Refuse a manifest whose ``"augment"`` names a switch :func:`build` does not know (the
    switches of candidates that were not shipped are gone: git keeps them)."""
    unknown = sorted(set(manifest.get("augment", {})) - set(AUGMENT))
    if unknown:
        raise InputError(f"manifest 'augment' has unknown switch(es) {', '.join(unknown)}; known: {', '.join(AUGMENT)}")
    extra = sorted(set(manifest.get("train_pairs", {})) - set(SOURCES))
    if extra:
        raise InputError(f"manifest 'train_pairs' has unknown source(s) {', '.join(extra)}; known: {', '.join(SOURCES)}")


def build(raw: Path, datasets: Path, manifest: dict, *, seed: int = 0) -> dict[str, dict[str, list[dict]]]:
    """{"train": {source: pairs}, "dev": {source: pairs}} as ``manifest`` asks (per-source caps,
    window size); deterministic for a seed."""
    from claims.atomic import AtomicDecomposer
    from franq.evaluation.common import expertqa_held_out
    from franq.fit.verifier.qa import answer_types, declarative_pairs, nq_qa_pairs, nq_rows
    from franq.lm.resources import wordnet_reader

    check_manifest(manifest)
    rng = random.Random(seed)
    ww = int(manifest["window_words"])
    caps = manifest["train_pairs"]
    nlp = tagger()  # tagger + NER (the decomposer loads its own parser)
    decomposer = AtomicDecomposer()
    augment = manifest.get("augment", {})
    corruptor = Corruptor(nlp, wordnet_reader(), rng)
    train: dict[str, list[dict]] = {}
    dev: dict[str, list[dict]] = {}

    train["snli"], dev["snli"] = snli(raw, rng)

    test_ids = {json.loads(x)["id"] for x in open(datasets / "nq-open" / "test.jsonl", encoding="utf-8")}
    rows = nq_rows(raw)
    nq_dev = [r for r in rows if r["id"] in test_ids]
    dev_passages = {r["passage"] for r in nq_dev}
    nq_train = [r for r in rows if r["id"] not in test_ids and r["passage"] not in dev_passages]
    eqa_train = [json.loads(x) for x in open(datasets / "expertqa" / "train.jsonl", encoding="utf-8")]
    eqa_test = [json.loads(x) for x in open(datasets / "expertqa" / "test.jsonl", encoding="utf-8")]
    eqa_held = expertqa_held_out(datasets)  # rand_test less the 12 answers also in train
    wice_fit = [json.loads(x) for x in open(datasets / "wice" / "fit.jsonl", encoding="utf-8")]

    def docs_of(texts):
        docs = [sentences(t) for t in dict.fromkeys(texts)]
        sample = [s for d in docs for s in d[:4] if 6 <= len(s.split()) <= 45]
        for doc in nlp.pipe(random.Random(seed).sample(sample, min(len(sample), 3000)), batch_size=64):
            corruptor.add_entities(doc)
        return docs

    train_docs = docs_of([r["passage"] for r in nq_train]
                         + [p["text"] for rec in eqa_train for p in rec["passages"]]
                         + [p["text"] for rec in wice_fit for p in rec["passages"]])
    dev_nq_docs = docs_of([r["passage"] for r in nq_dev])
    # all 217 answers' passages (the 12 also in train among them: passage text, no labels), so
    # the committed dev sets stay as built; the human-labelled dev claims below leave them out
    dev_eqa_docs = docs_of([p["text"] for rec in eqa_test for p in rec["passages"]])
    kw = dict(window_words=ww, nlp=nlp, decomposer=decomposer, corruptor=corruptor)
    shared = manifest.get("rng", "shared") == "shared"  # "shared": one stream for all (how v1 was built)

    def own(name: str) -> random.Random:  # "own": each set its own stream, so a change to one never moves another
        corruptor.rng = rng if shared else random.Random(f"{seed}:{name}")
        return corruptor.rng

    train["synthetic"] = synthetic_pairs(train_docs, n=caps["synthetic"], source="synthetic", rng=own("synthetic"),
                                         window_swap=float(augment.get("window_entity_swap", 0.0)), **kw)
    dev["synthetic-nq"] = synthetic_pairs(dev_nq_docs, n=manifest["dev_pairs"], source="synthetic-nq",
                                          rng=own("synthetic-nq"), **kw)
    dev["synthetic-expertqa"] = synthetic_pairs(dev_eqa_docs, n=manifest["dev_pairs"], source="synthetic-expertqa",
                                                rng=own("synthetic-expertqa"), **kw)
    types_train, types_dev = answer_types(nq_train, nlp), answer_types(nq_dev, nlp)  # (typed, kinds) each
    train["nq-qa"] = nq_qa_pairs(nq_train, rng=own("nq-qa"), window_words=ww, typed=types_train[0],
                                 kinds=types_train[1])
    dev["nq-qa"] = nq_qa_pairs(nq_dev, rng=own("nq-qa-dev"), window_words=ww, typed=types_dev[0],
                               kinds=types_dev[1])[: manifest["dev_pairs"]]
    # questions said as statements: contradictions worded otherwise than the passage. The dev
    # set is always built, on its own random stream (the other sets stay as they were).
    dev["nq-declarative"] = declarative_pairs(nq_dev, nlp=nlp, rng=random.Random(f"{seed}:nq-declarative-dev"),
                                              window_words=ww, typed=types_dev[0],
                                              kinds=types_dev[1])[: manifest["dev_pairs"]]
    if augment.get("declarative_qa"):
        train["nq-declarative"] = declarative_pairs(nq_train, nlp=nlp, rng=own("nq-declarative"), window_words=ww,
                                                    typed=types_train[0], kinds=types_train[1])
    train["expertqa"] = labelled_claims(datasets / "expertqa" / "train.jsonl", "expertqa", ww)
    if augment.get("paraphrased_contradictions"):
        own("expertqa-contradicted")
        train["expertqa-contradicted"] = paraphrased_contradictions(train["expertqa"], corruptor)
    eqa_dev = labelled_claims(eqa_held, "expertqa", ww)
    dev["expertqa"] = random.Random(seed).sample(eqa_dev, min(len(eqa_dev), manifest.get("dev_expertqa", 500)))
    train["wice"] = wice_supported_windows(raw, {r["id"] for r in wice_fit}, ww)
    dev["wice"] = labelled_claims(datasets / "wice" / "heldout.jsonl", "wice", ww)
    for name, pairs in train.items():
        rng.shuffle(pairs)
        cap = caps.get(name)
        if cap is not None:
            train[name] = pairs[:cap]
    return {"train": train, "dev": dev}
