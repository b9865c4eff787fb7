"""The verifier's training data: windows, SNLI detokenizing, typed corruptions."""
import random

import pytest

from franq.fit.verifier.corrupt import Corruptor
from franq.fit.verifier.data import detok, sentences, synthetic_pairs, window_around, windows


def test_windows_cover_every_sentence_with_overlap():
    sents = [f"Sentence number {i} has five words." for i in range(10)]
    ws = windows(sents, window_words=15)
    assert ws[0][0] == 0 and ws[-1][1] == 10
    assert all(b[0] == a[1] - 1 for a, b in zip(ws, ws[1:]))  # one sentence shared
    assert all(sum(len(s.split()) for s in sents[i:j]) <= 15 or j - i == 1 for i, j in ws)


def test_window_around_contains_its_sentence():
    sents = sentences("One two three. Four five six. Seven eight nine. Ten eleven twelve.")
    for k in range(len(sents)):
        i, j = window_around(sents, k, 6, random.Random(k))
        assert i <= k < j


def test_snli_detokenized():
    assert detok("Two women are n't embracing . ") == "Two women aren't embracing."


def test_corruptions_change_one_fact():
    c = Corruptor(None, None, random.Random(0))
    assert c._negation("The tower is located in Paris.", None) == "The tower is not located in Paris."
    assert c._negation("It was not built in 1889.", None) == "It was built in 1889."
    year = c._year("It was built in 1889.", None)
    assert year != "It was built in 1889." and year.startswith("It was built in 1")
    number = c._number("It is 330 metres tall.", None)
    assert number != "It is 330 metres tall." and number.endswith(" metres tall.")
    assert c._number("No digits here.", None) is None


class _Doc(list):
    ents = ()


def _nlp(text):
    return _Doc()


def _docs():
    return [[f"The Garabit Viaduct was built in {1880 + d}.", f"Item {d} is a passage about bridges and rails.",
             "It spans a deep valley of the Truyere river.", f"Filler sentence number {d} says nothing else.",
             f"Trains crossed it for {d + 10} years.", "The engineer designed many other bridges too."]
            for d in range(12)]


def test_synthetic_pairs_make_all_three_labels_from_each_passage_once():
    kw = dict(window_words=12, nlp=_nlp, decomposer=None, source="t")
    pairs = synthetic_pairs(_docs(), n=1000, corruptor=Corruptor(_nlp, None, random.Random(0)), rng=random.Random(0),
                            **kw)
    assert sum(p["how"] == "sentence" for p in pairs) == len(_docs())  # one sentence of each passage
    assert {p["label"] for p in pairs} == {0, 1, 2}
    assert all(p["claim"] in p["premise"] for p in pairs if p["label"] == 0)


def test_a_manifest_with_a_switch_of_an_unshipped_candidate_is_refused():
    from franq.errors import InputError
    from franq.fit.verifier.data import check_manifest

    check_manifest({"augment": {"declarative_qa": True, "window_entity_swap": 0.5}, "train_pairs": {"snli": 1}})
    with pytest.raises(InputError, match="near_substitutes"):
        check_manifest({"augment": {"near_substitutes": 0.5}, "train_pairs": {}})
    with pytest.raises(InputError, match="synthetic-partial"):
        check_manifest({"train_pairs": {"synthetic-partial": 3000}})


def test_window_entity_swap_takes_an_entity_the_window_names_in_another_sentence():
    from types import SimpleNamespace as E

    def doc(text, *names):
        d = _Doc()
        d.ents = [E(text=n, label_="GPE", start_char=text.index(n), end_char=text.index(n) + len(n)) for n in names]
        return d

    claim = "The capital of Australia is Canberra."
    window = "Canberra is the capital of Australia. Sydney is its largest city."
    c = Corruptor(None, None, random.Random(0))
    got = {c.from_window(claim, doc(claim, "Australia", "Canberra"), doc(window, "Canberra", "Australia", "Sydney"),
                         "Canberra is the capital of Australia.") for _ in range(10)}
    assert got == {"The capital of Australia is Sydney.", "The capital of Sydney is Canberra."}
    # an entity of the claim's own sentence ("Y and Z founded it") is never the substitute
    claim = "Ann founded the firm."
    source = "Ann and Bea founded the firm."
    assert c.from_window(claim, doc(claim, "Ann"), doc(source, "Ann", "Bea"), source) is None
