"""The verifier's training data: windows, SNLI detokenizing, typed corruptions."""
import random

import pytest

from franq.fit.verifier_corrupt import Corruptor, shorten_subject, tagger
from franq.fit.verifier_data import detok, sentences, synthetic_pairs, window_around, windows


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


def test_synthetic_pairs_walk_the_passages_again_until_n_and_add_far_windows():
    kw = dict(window_words=12, nlp=_nlp, decomposer=None, source="t")
    one = synthetic_pairs(_docs(), n=1000, corruptor=Corruptor(_nlp, None, random.Random(0)), rng=random.Random(0),
                          **kw)
    two = synthetic_pairs(_docs(), n=1000, corruptor=Corruptor(_nlp, None, random.Random(0)), rng=random.Random(0),
                          passes=2, **kw)
    assert sum(p["how"] == "sentence" for p in two) > sum(p["how"] == "sentence" for p in one) > 0
    far = synthetic_pairs(_docs(), n=1000, corruptor=Corruptor(_nlp, None, random.Random(0)), rng=random.Random(1),
                          far=1.0, **kw)
    faraway = [p for p in far if p["how"] == "far"]
    assert faraway and all(p["label"] == 2 and p["claim"] not in p["premise"] for p in faraway)
    assert not any(p["how"] == "far" for p in one)  # off unless asked


def test_shorten_subject_names_the_subject_as_answers_refer_back_to_it():
    from franq.lm.resources import wordnet_reader

    wn = wordnet_reader()
    if wn is None:
        pytest.skip("no WordNet (the wn package)")
    assert shorten_subject("The Eiffel Tower is a wrought-iron lattice tower.", wn) == \
        "The tower is a wrought-iron lattice tower."
    assert shorten_subject("The Garabit Viaduct was built by Eiffel.", wn) == "The viaduct was built by Eiffel."
    assert shorten_subject("Gustave Eiffel was a French engineer.", wn) is None  # a name, not a noun
    assert shorten_subject("The tower was built in 1889.", wn) is None  # already short
    assert shorten_subject("The Eiffel Tower is tall.", None) is None


def test_cohyponym_swaps_a_concrete_noun_of_the_predicate_never_the_subject():
    from franq.lm.resources import wordnet_reader

    wn = wordnet_reader()
    nlp = tagger()
    if wn is None or nlp is None:
        pytest.skip("no WordNet or spaCy pipeline")
    c = Corruptor(nlp, wn, random.Random(0), cohyponym=True)
    text = "The tower is made of iron."
    out = c._cohyponym(text, nlp(text))
    assert out and out.startswith("The tower is made of ") and out != text
    assert c._cohyponym("The tower is made of interest.", nlp("The tower is made of interest.")) is None  # abstract
    assert "cohyponym" in c.kinds and "cohyponym" not in Corruptor(nlp, wn, random.Random(0)).kinds


def test_partial_pairs_join_two_facts_supported_only_when_the_window_states_both():
    from franq.fit.verifier_data import words
    from franq.fit.verifier_partial import join, partial_pairs

    pairs = partial_pairs(_docs(), n=1000, window_words=20, nlp=_nlp, decomposer=None,
                          corruptor=Corruptor(_nlp, None, random.Random(0)), rng=random.Random(0))
    by = {label: [p for p in pairs if p["label"] == label] for label in (0, 1, 2)}
    assert by[0] and by[1] and by[2] and all(p["source"] == "synthetic-partial" for p in pairs)
    for p in pairs:
        facts = [f.strip(" .") for f in p["claim"].replace(", and ", "; ").split("; ")]
        assert len(facts) == 2  # every label is a two-fact claim: length is no cue
        stated = [f.lower() in p["premise"].lower() for f in facts]  # "It spans" joined as "and it spans"
        if p["label"] == 0:
            assert all(stated)
        elif p["label"] == 2:  # one fact stated, the other from outside the window
            assert sum(stated) == 1 and not words(facts[stated.index(False)]) <= words(p["premise"])
        else:  # one fact changed by a typed substitution
            assert sum(stated) == 1 and p["how"].startswith("one-")
    assert join("The tower is in Paris.", "It was built in 1889.", random.Random(0)) in (
        "The tower is in Paris, and it was built in 1889.", "The tower is in Paris; it was built in 1889.")


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
