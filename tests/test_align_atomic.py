"""Atomic claims -> answer characters -> answer tokens, on tricky answers, with a
byte-level BPE and a SentencePiece-like tokenizer (offset mappings)."""
from __future__ import annotations

import pytest

from claims.align import align_claims, answer_units, locate_claim
from claims.text import content_words

CASES = [
    # (answer, claim, words that must be covered, words that must not)
    ("Paris, the capital of France, is known for the Eiffel Tower.",
     "Paris is the capital of France.", ["Paris", "capital", "France"], ["Eiffel", "known"]),
    ("Key facts:\n- The tower is 330 metres tall [1].\n- It was built in 1889 [2][3].",
     "The Eiffel Tower was built in 1889.", ["built", "1889"], ["330", "[2]", "[3]"]),
    ("The Eiffel Tower [3] was designed by Gustave Eiffel's company [4].",
     "Gustave Eiffel's company designed the Eiffel Tower.", ["Gustave", "designed"], ["[3]", "[4]"]),
    ("The river is long. The river is wide, and the river is old.",
     "The river is old.", ["old"], ["long"]),
    ("Zürich and São Paulo host cafés. Tokyo (東京) is the capital of Japan.",
     "Tokyo is the capital of Japan.", ["Tokyo", "capital", "Japan"], ["Zürich", "São"]),
    ("Zürich and São Paulo host cafés. Tokyo (東京) is the capital of Japan.",
     "São Paulo hosts cafés.", ["São", "Paulo", "cafés"], ["Tokyo"]),
    ("Lyon is a large city. Marseille is a port, and Lyon is known for food.",
     "Lyon is known for food.", ["Lyon", "known", "food"], ["large", "Marseille"]),
]


def _covered_text(answer, claim, offsets):
    return "".join(answer[offsets[i][0]:offsets[i][1]] for i in claim.token_positions)


@pytest.mark.parametrize("lm_fixture", ["tiny_lm", "tiny_sp_lm"])
@pytest.mark.parametrize("answer, text, must, must_not", CASES)
def test_claim_tokens_round_trip(request, lm_fixture, answer, text, must, must_not):
    lm = request.getfixturevalue(lm_fixture)
    claim = locate_claim(answer, text, sentence=None)
    ids, offsets = lm.encode_answer(answer)
    [aligned] = align_claims(answer, [claim], offsets, ids)
    assert aligned.is_aligned, aligned.note
    assert aligned.token_ids == tuple(ids[i] for i in aligned.token_positions)
    spans_chars = {k for a, b in aligned.char_spans for k in range(a, b) if not answer[k].isspace()}
    token_chars = {k for i in aligned.token_positions for k in range(*offsets[i])}
    assert spans_chars <= token_chars  # every claim character is in a chosen token
    for i in aligned.token_positions:  # every chosen token touches the claim
        assert any(a < offsets[i][1] and offsets[i][0] < b for a, b in aligned.char_spans)
    span_text = " ".join(answer[a:b] for a, b in aligned.char_spans)
    for w in must:
        assert w in span_text, (w, span_text)
    for w in must_not:
        assert w not in span_text, (w, span_text)
    assert content_words(_covered_text(answer, aligned, offsets))


def test_repeated_words_take_the_occurrence_in_order():
    answer = "The river is long. The river is wide, and the river is old."
    claim = locate_claim(answer, "The river is old.", sentence=None)
    assert [answer[a:b] for a, b in claim.char_spans] == ["river is old"]
    assert claim.sentence == 1


def test_claim_words_in_two_sentences_go_to_the_best_sentence():
    answer = "Marie Curie was born in Warsaw. She won two Nobel Prizes in physics and chemistry."
    claim = locate_claim(answer, "Marie Curie won two Nobel Prizes.", sentence=None)
    assert claim.sentence == 1
    assert [answer[a:b] for a, b in claim.char_spans] == ["won two Nobel Prizes"]


def test_ties_go_to_the_unit_near_the_previous_claim():
    answer = "Lyon is big. Paris is old. Lyon is big."
    units = answer_units(answer)
    assert locate_claim(answer, "Lyon is large and big", sentence=None, units=units, near=2).sentence == 2
    assert locate_claim(answer, "Lyon is large and big", sentence=None, units=units).sentence == 0


def test_inflections_match():
    answer = "The bridge, designed by Eiffel, was built quickly."
    claim = locate_claim(answer, "Eiffel designs the bridge.", sentence=None)
    assert {answer[a:b] for a, b in claim.char_spans} >= {"bridge", "designed by Eiffel"}


@pytest.mark.parametrize("text, note", [
    ("Berlin is in Germany.", "no content word of the claim occurs in the answer"),
    ("It is.", "the claim has no content words to align"),
])
def test_unalignable_claim_keeps_reason(tiny_lm, text, note):
    answer = "Paris is the capital of France."
    claim = locate_claim(answer, text, sentence=None)
    ids, offsets = tiny_lm.encode_answer(answer)
    [aligned] = align_claims(answer, [claim], offsets, ids)
    assert not aligned.is_aligned and aligned.note == note


def test_weak_match_is_noted():
    answer = "Paris is the capital of France."
    claim = locate_claim(answer, "Paris hosted the 2024 Summer Olympic Games.", sentence=None)
    assert claim.char_spans and "only 1 of" in claim.note
