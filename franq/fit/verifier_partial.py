"""Multi-fact claims for the verifier (``synthetic-partial``): two facts joined into one
claim, read against a window that states both, one, or one of them changed.

WiCE's "partially supported" claims and ExpertQA's "Incomplete" ones are long sentences
whose every fact but one is in the evidence; the single-fact synthetic claims never show
the verifier that one missing fact makes the whole claim not supported, nor a substitution
hidden among true facts said in other words (MiniCheck's lesson: synthetic claims that
need several sentences at once). Per passage sentence k and its window:

- supported: a fact of sentence k joined with a fact of another sentence of the window;
- not mentioned: a fact of sentence k joined with a fact of a sentence of the same passage
  outside the window (same topic, not stated here) or, when there is none, of a related
  passage;
- contradicted: the supported claim with one typed substitution in one of its two facts.

All three are two-fact claims in random order, so neither length nor position is a cue.
"""
from __future__ import annotations

import random

from franq.fit.verifier_corrupt import Corruptor
from franq.fit.verifier_data import RelatedPassages, overlap, window_around, words

LOWER_FIRST = frozenset("The A An It Its This That These Those He She They His Her Their In On At "
                        "There Some Many Most".split())


def join(a: str, b: str, rng: random.Random) -> str:
    """Two facts as one sentence: "a, and b" or "a; b" (b's first word lower-cased when it
    is a function word, never a name)."""
    a, b = a.strip().rstrip(".;,"), b.strip()
    first = b.split(" ", 1)[0]
    if first in LOWER_FIRST:
        b = b[0].lower() + b[1:]
    return f"{a}{', and ' if rng.random() < 0.7 else '; '}{b}"


def _fact(sentence: str, decomposer, rng: random.Random) -> str:
    """One atomic claim of ``sentence`` (franq's decomposer), or the sentence when it has
    none of at least four words."""
    if decomposer is not None:
        parts = [c.text for c in decomposer.decompose(sentence) if 4 <= len(c.text.split()) <= 25]
        if parts:
            return rng.choice(parts)
    return sentence


def partial_pairs(docs: list[list[str]], *, n: int, window_words: int, nlp, decomposer, corruptor: Corruptor,
                  rng: random.Random, source: str = "synthetic-partial", passes: int = 2) -> list[dict]:
    """About ``n`` pairs (a third each label) from passages given as lists of sentences."""
    ok = lambda s: 6 <= len(s.split()) <= 40  # noqa: E731
    related = RelatedPassages(docs)
    order = [d for d, s in enumerate(docs) if len(s) >= 2]
    rng.shuffle(order)
    out: list[dict] = []
    for d in order * max(1, passes):
        if len(out) >= n:
            break
        sents = docs[d]
        k = rng.randrange(len(sents))
        if not ok(sents[k]):
            continue
        i, j = window_around(sents, k, window_words, rng)
        premise = " ".join(sents[i:j])
        inside = [x for x in range(i, j) if x != k and ok(sents[x])]
        if not inside:
            continue
        pw = words(premise)
        away = [sents[x] for x in range(len(sents)) if (x < i - 1 or x > j) and ok(sents[x])
                and overlap(words(sents[x]), pw) < 0.5]
        if not away:
            near = related.of(sents[k], d)
            if near:
                away = [s for s in docs[rng.choice(near)] if ok(s) and overlap(words(s), pw) < 0.5]
        if not away:
            continue
        a = _fact(sents[k], decomposer, rng)
        b = _fact(sents[rng.choice(inside)], decomposer, rng)
        c = _fact(rng.choice(away), decomposer, rng)
        if overlap(words(c), pw) >= 0.5:  # the missing fact must not be restated by the window
            continue
        pair = (lambda x, y: join(x, y, rng) if rng.random() < 0.5 else join(y, x, rng))
        out.append({"premise": premise, "claim": pair(a, b), "label": 0, "source": source, "how": "both"})
        out.append({"premise": premise, "claim": pair(a, c), "label": 2, "source": source, "how": "one-missing"})
        target, other = (a, b) if rng.random() < 0.5 else (b, a)
        bad = corruptor.corrupt(target)
        if bad:
            out.append({"premise": premise, "claim": pair(bad[0], other), "label": 1, "source": source,
                        "how": f"one-{bad[1]}"})
    return out
