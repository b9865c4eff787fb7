"""Sentence-level decomposition and token alignment on tricky answers."""
from __future__ import annotations

import pytest

from claims import SentenceDecomposer, align_claims, locate_claim
from claims.checkworthy import non_claim_reason
from claims.decompose import spans_text

TRICKY = {
    "citations": "Paris is the capital of France [1][2]. It has 2.1 million people [3], e.g. in 2020.",
    "list": "Key facts:\n\n- **Lyon** is in France [2].\n- Marseille is a port.\n1. Nice is sunny.\n2) Lille is north.",
    "headings": "# Overview\nThe Eiffel Tower is in Paris.\n\n## History\nIt was built from 1887 to 1889 [1, 2].",
    "unicode": "Zürich liegt in der Schweiz 🙂. São Paulo is in Brazil [4]. 東京 is Tokyo.",
    "abbrev": "Dr. Smith works at the U.S. Army. He earned 3.5 points, i.e. a lot.",
}


def decompose(answer):
    return SentenceDecomposer().decompose(answer)


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_claim_text_is_exactly_its_spans(name):
    answer = TRICKY[name]
    for c in decompose(answer):
        assert c.text == spans_text(answer, c.char_spans)
        assert "[" not in c.text and "**" not in c.text
        assert not c.text.startswith(("-", "1.", "2)", "#", " "))


def test_lists_headings_and_citations_are_split_and_cleaned():
    claims = decompose(TRICKY["list"])
    assert [c.text for c in claims if c.check_worthy] == [
        "Lyon is in France.", "Marseille is a port.", "Nice is sunny.", "Lille is north."]
    assert (claims[0].text, claims[0].check_worthy, claims[0].note) == ("Key facts:", False, "heading")
    heads = [c for c in decompose(TRICKY["headings"]) if not c.check_worthy]
    assert [(c.text, c.note) for c in heads] == [("Overview", "heading"), ("History", "heading")]
    cited = decompose(TRICKY["citations"])
    assert [c.text for c in cited] == ["Paris is the capital of France.",
                                       "It has 2.1 million people, e.g. in 2020."]


def test_abbreviations_and_decimals_do_not_split_sentences():
    assert len(decompose(TRICKY["abbrev"])) == 2


@pytest.mark.parametrize("name", sorted(TRICKY))
@pytest.mark.parametrize("lm_fixture", ["tiny_lm", "tiny_sp_lm"])
def test_alignment_round_trips_claim_text(name, lm_fixture, request):
    lm = request.getfixturevalue(lm_fixture)
    answer = TRICKY[name]
    ids, offsets = lm.encode_answer(answer)
    for c in align_claims(answer, decompose(answer), offsets, ids):
        assert c.is_aligned, c
        # byte-level pieces of one character share its range: take the union of ranges
        chars = sorted({i for t in c.token_positions for i in range(*offsets[t])})
        covered = "".join(answer[i] for i in chars)
        # the claim's tokens cover each of its words, in order, and nothing of other claims' words
        squeezed = "".join(covered.split())
        for a, b in c.char_spans:
            assert "".join(answer[a:b].split()) in squeezed
        assert c.token_ids == tuple(ids[t] for t in c.token_positions)


def test_claims_sharing_no_tokens_do_not_overlap(tiny_lm):
    answer = TRICKY["citations"]
    ids, offsets = tiny_lm.encode_answer(answer)
    a, b = align_claims(answer, decompose(answer), offsets, ids)
    assert not set(a.token_positions) & set(b.token_positions)


def test_unalignable_claim_is_reported_not_dropped(tiny_lm):
    answer = "Paris is big."
    ids, offsets = tiny_lm.encode_answer(answer)
    claims = [locate_claim(answer, "Paris is big."), locate_claim(answer, "Quantum chromodynamics.")]
    out = align_claims(answer, claims, offsets, ids)
    assert len(out) == 2
    assert out[0].is_aligned
    assert not out[1].is_aligned and "no content word" in out[1].note


def test_locate_claim_exact_then_paraphrase():
    answer = "Paris, the capital of France, is large [1]. Lyon is smaller."
    exact = locate_claim(answer, "Lyon is smaller.")
    assert spans_text(answer, exact.char_spans) == "Lyon is smaller."
    para = locate_claim(answer, "Paris is the capital of France.")
    words = {answer[a:b] for a, b in para.char_spans}
    assert "Paris" in words and any("France" in w for w in words)
    assert all(b <= answer.index("Lyon") for _, b in para.char_spans)


@pytest.mark.parametrize("sentence", [
    "That's a complex question that may not have a definitive answer.",
    "It depends.", "It is difficult to say.", "There is no simple answer.", "This is a good question.",
])
def test_hedges_are_not_check_worthy(sentence):
    assert non_claim_reason(sentence) == "hedge"
    claims = SentenceDecomposer().decompose(sentence + " Paris is the capital of France.")
    assert [(c.check_worthy, c.note) for c in claims] == [(False, "hedge"), (True, None)]


@pytest.mark.parametrize("sentence", [
    "It depends on the altitude: water boils at 100 degrees Celsius at sea level.",
    "It is hard to say exactly, but the tower was finished in 1889 by Gustave Eiffel's company.",
    "The question of who designed the tower has a definitive answer: Gustave Eiffel's company.",
])
def test_sentences_that_also_state_a_fact_are_still_claims(sentence):
    assert non_claim_reason(sentence) is None
