"""Hard substitutes for the verifier's contradicted pairs (franq.fit.verifier_near): a
same-type entity or answer the sentence encoder finds close, never an alias of the original.
A fixed toy embedding stands in for the encoder."""
import random

import numpy as np

from franq.fit.verifier_corrupt import Corruptor
from franq.fit.verifier_near import NearestPool
from franq.fit.verifier_qa import qa_pairs

# 2-d directions: the Australian cities sit close together, Tokyo far; "Canberra City" is
# an alias by its words, "Canbera" one by its similarity
ANGLE = {"Canberra": 0.0, "Sydney": 0.6, "Melbourne": 0.7, "Tokyo": 2.5, "Canberra City": 0.1, "Canbera": 0.01,
         "Paris": 3.1}


def _embed(texts):
    return np.array([[np.cos(ANGLE[t]), np.sin(ANGLE[t])] for t in texts], dtype=np.float32)


def _pool(k=10):
    pool = NearestPool(_embed, k=k)
    pool.add("GPE", ["Canberra", "Sydney", "Sydney", "Melbourne", "Tokyo", "Canberra City", "Canbera"])
    return pool


def test_nearest_picks_a_close_string_never_the_same_an_alias_or_one_sharing_a_word():
    pool = _pool(k=1)
    picks = {pool.nearest("GPE", "Canberra", random.Random(s)) for s in range(20)}
    assert picks == {"Sydney"}  # Canbera (cos ~1) is an alias, Canberra City shares a word
    assert "GPE" in pool and "ORG" not in pool
    assert _pool(k=2).nearest("GPE", "Canberra", random.Random(0), ok=lambda s: s != "Sydney") in {"Melbourne", "Tokyo"}
    assert pool.nearest("ORG", "Canberra", random.Random(0)) is None
    assert NearestPool(_embed, k=1).nearest("GPE", "Canberra", random.Random(0)) is None


def test_nearest_embeds_a_string_outside_the_group():
    pool = NearestPool(_embed, k=1)
    pool.add("GPE", ["Sydney", "Tokyo"])
    assert pool.nearest("GPE", "Paris", random.Random(0)) == "Tokyo"


class _Ent:
    def __init__(self, text, start, label="GPE"):
        self.text, self.start_char, self.end_char, self.label_ = text, start, start + len(text), label


class _Doc:
    def __init__(self, ents):
        self.ents = ents


def test_corruptor_takes_near_entities_for_its_share_and_random_ones_otherwise():
    text = "The capital of Australia is Canberra."
    doc = _Doc([_Ent("Canberra", text.index("Canberra"))])
    c = Corruptor(None, None, random.Random(0))
    for name in ["Sydney", "Melbourne", "Tokyo", "Paris"] * 6:
        c.pool["GPE"].append(name)
    c.use_near(_pool(k=1), 1.0)
    assert {c._entity(text, doc) for _ in range(10)} == {"The capital of Australia is Sydney."}
    c.use_near(_pool(k=1), 0.0)  # off: random same-type entities again
    outs = {c._entity(text, doc) for _ in range(40)}
    assert "The capital of Australia is Tokyo." in outs and "The capital of Australia is Paris." in outs


def test_qa_pairs_draw_near_wrong_answers_with_their_how():
    rows = [{"id": f"q{i}", "question": f"what is the capital number {i}", "answers": [a],
             "passage": f"{a} is the capital city number {i}. It has a harbour."}
            for i, a in enumerate(["Canberra", "Sydney", "Melbourne", "Tokyo"])]
    typed, kinds = {"GPE": rows}, {r["id"]: "GPE" for r in rows}
    pool = NearestPool(_embed, k=1)
    out = qa_pairs(rows, lambda r, a: f"The answer is {a}.", rng=random.Random(0), window_words=20, typed=typed,
                   kinds=kinds, source="t", near=pool, near_share=1.0)
    bad = {p["claim"]: p for p in out if p["label"] == 1}
    assert bad["The answer is Sydney."]["how"] == "near-answer"  # for Canberra's question
    assert all(p["how"] == "near-answer" for p in bad.values())
    plain = qa_pairs(rows, lambda r, a: f"The answer is {a}.", rng=random.Random(0), window_words=20, typed=typed,
                     kinds=kinds, source="t")
    assert all(p["how"] == "wrong-answer" for p in plain if p["label"] == 1)
