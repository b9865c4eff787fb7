"""LLMDecomposer with a scripted chat model: lenient parsing, repair retry, fallback,
non-claim sentences, cache and usage counts."""
from __future__ import annotations

import json

import pytest

from claims.chat import ChatError, ChatReply
from claims.checkworthy import non_claim_reason
from claims.decompose import SentenceDecomposer, decompose_all, spans_text
from claims.llm_decompose import EXAMPLE_CLAIMS, LLMDecomposer, parse_claim_list
from conftest import make_franq

ANSWER = ("Sure! Paris, the capital of France, has about 2.1 million inhabitants [1]. "
          "The Eiffel Tower was built in 1889. I hope this helps!")


class ScriptedChat:
    """Test double: returns the scripted replies in order (an exception is raised)."""

    def __init__(self, *replies, name="scripted"):
        self.replies = list(replies)
        self.name = name
        self.messages = []

    def complete(self, messages, *, max_tokens):
        self.messages.append(messages)
        r = self.replies.pop(0)
        if isinstance(r, Exception):
            raise r
        return ChatReply(r, prompt_tokens=100, completion_tokens=20, calls=1)


@pytest.mark.parametrize("reply, expected", [
    ('["Ann is tall.", "Bob is short."]', ["Ann is tall.", "Bob is short."]),
    ('Here are the claims:\n```json\n["Ann is tall.", "Bob is short."]\n```\nDone.', ["Ann is tall.", "Bob is short."]),
    ("Claims: ['Ann is tall.', 'Bob is short.'] hope it helps", ["Ann is tall.", "Bob is short."]),
    ('["Ann is tall.", "Bob is short.", "Eve is', ["Ann is tall.", "Bob is short."]),
    ('["Ann is tall.", "", "ann is tall.", "  ", "Bob is short."]', ["Ann is tall.", "Bob is short."]),
    ('[{"claim": "Ann is tall."}, {"text": "Bob is short."}]', ["Ann is tall.", "Bob is short."]),
    ("1. Ann is tall.\n2. Bob is short.", ["Ann is tall.", "Bob is short."]),
    ('["Ann is tall [1].", "Bob is short."]\n\nText: Ann [2] and "Bob" [3]', ["Ann is tall.", "Bob is short."]),
    ("['Ann is tall.', 'Bob is short.'] and [1]", ["Ann is tall.", "Bob is short."]),
])
def test_parse_claim_list_is_lenient(reply, expected):
    parsed = parse_claim_list(reply)
    assert parsed.problem is None
    assert list(parsed.claims) == expected


def test_parse_claim_list_reports_duplicates_and_empties():
    parsed = parse_claim_list('["Ann is tall.", "", "Ann is tall"]')
    assert "dropped 1 empty claim(s)" in parsed.repairs
    assert "dropped 1 duplicated claim(s)" in parsed.repairs


@pytest.mark.parametrize("reply", ["", "I cannot do that.", "[]", '["", "  "]'])
def test_parse_claim_list_names_problem_when_nothing_usable(reply):
    parsed = parse_claim_list(reply)
    assert parsed.claims == () and parsed.problem


def test_atomic_claims_are_aligned_and_non_claims_kept():
    chat = ScriptedChat(json.dumps(["Paris is the capital of France.", "Paris has about 2.1 million inhabitants.",
                                    "The Eiffel Tower was built in 1889."]))
    dec = LLMDecomposer(chat).decompose_report(ANSWER)
    assert dec.method == "llm" and dec.warnings == ()
    texts = [(c.text, c.check_worthy, c.note) for c in dec.claims]
    assert texts[0] == ("Sure!", False, "greeting")
    assert texts[-1] == ("I hope this helps!", False, "greeting")
    worthy = [c for c in dec.claims if c.check_worthy]
    assert [c.text for c in worthy] == ["Paris is the capital of France.", "Paris has about 2.1 million inhabitants.",
                                        "The Eiffel Tower was built in 1889."]
    capital = worthy[0]
    assert [ANSWER[a:b] for a, b in capital.char_spans] == ["Paris", "capital of France"]
    assert worthy[2].char_spans == ((ANSWER.index("The Eiffel"), ANSWER.index("1889.") + 5),)
    assert dec.usage.calls == 1 and dec.usage.prompt_tokens == 100 and dec.usage.completion_tokens == 20


def test_broken_reply_is_retried_once_with_repair_message():
    chat = ScriptedChat("Sorry, here you go: The Eiffel Tower", '["The Eiffel Tower was built in 1889."]')
    dec = LLMDecomposer(chat).decompose_report(ANSWER)
    assert dec.method == "llm"
    assert len(chat.messages) == 2
    assert chat.messages[1][-2]["role"] == "assistant" and "JSON array" in chat.messages[1][-1]["content"]
    assert dec.usage.calls == 2
    assert any("no claim covers sentence" in w for w in dec.warnings)


def test_unusable_output_falls_back_to_sentence_splitter_with_warning():
    chat = ScriptedChat("no list here", "still no list")
    dec = LLMDecomposer(chat).decompose_report(ANSWER)
    assert dec.method == "llm->sentence" and dec.usage.fallbacks == 1
    assert dec.claims == tuple(SentenceDecomposer().decompose(ANSWER))
    assert len(dec.warnings) == 1 and "after one retry; fell back to the sentence splitter" in dec.warnings[0]


def test_claims_not_in_answer_trigger_fallback():
    chat = ScriptedChat(json.dumps(EXAMPLE_CLAIMS), json.dumps(["Berlin is in Germany."]))
    dec = LLMDecomposer(chat).decompose_report(ANSWER)
    assert dec.method == "llm->sentence"
    assert "no claim of the reply occurs in the answer" in dec.warnings[0]


def test_unalignable_claim_is_reported_not_dropped():
    chat = ScriptedChat(json.dumps(["The Eiffel Tower was built in 1889.", "Berlin is in Germany."]))
    dec = LLMDecomposer(chat).decompose_report(ANSWER)
    berlin = [c for c in dec.claims if c.text == "Berlin is in Germany."]
    assert len(berlin) == 1 and berlin[0].char_spans == ()
    assert berlin[0].note == "no content word of the claim occurs in the answer"


def test_failed_call_falls_back_and_is_not_cached(tmp_path):
    chat = ScriptedChat(ChatError("server down"), '["The Eiffel Tower was built in 1889."]')
    d = LLMDecomposer(chat, cache_dir=tmp_path)
    first = d.decompose_report(ANSWER)
    assert first.method == "llm->sentence" and "the model call failed: server down" in first.warnings[0]
    second = d.decompose_report(ANSWER)
    assert second.method == "llm" and second.usage.cache_hits == 0


def test_cache_makes_reruns_free_and_identical(tmp_path):
    reply = '["The Eiffel Tower was built in 1889.", "Paris is the capital of France."]'
    first = LLMDecomposer(ScriptedChat(reply), cache_dir=tmp_path).decompose_report(ANSWER)
    again = LLMDecomposer(ScriptedChat(), cache_dir=tmp_path).decompose_report(ANSWER)
    assert again.claims == first.claims
    assert again.usage.calls == 0 and again.usage.cache_hits == 1
    other_model = ScriptedChat(reply, name="other")
    LLMDecomposer(other_model, cache_dir=tmp_path).decompose_report(ANSWER)
    assert other_model.replies == []  # a different model is a different cache key


def test_decompose_many_keeps_order_under_concurrency():
    answers = [f"Item {i} weighs {i} kilograms." for i in range(6)]

    class EchoChat:
        name = "echo"

        def complete(self, messages, *, max_tokens):
            text = messages[-1]["content"].rsplit("Text: ", 1)[1].split("\nClaims:")[0]
            return ChatReply(json.dumps([text]))

    decs = LLMDecomposer(EchoChat(), concurrency=3).decompose_many(answers)
    assert [d.claims[0].text for d in decs] == answers


def test_decompose_all_wraps_plain_decomposers():
    class Fixed:
        name = "fixed"

        def decompose(self, answer):
            return SentenceDecomposer().decompose(answer)

    [dec] = decompose_all(Fixed(), ["A cat sat."])
    assert dec.method == "fixed" and dec.claims[0].text == "A cat sat."


@pytest.mark.parametrize("sentence, reason", [
    ("Sure!", "greeting"), ("Great question.", "greeting"), ("I hope this helps!", "greeting"),
    ("I'm sorry, but I cannot answer that.", "refusal"), ("Here are the key facts:", "heading"),
    ("What is the capital of France?", "question"), ("The capital of France", "restated question"),
    ("Paris is the capital of France.", None), ("OK Computer is an album by Radiohead.", None),
    ("Certainly, the Eiffel Tower was built in 1889.", None),
])
def test_non_claim_sentences(sentence, reason):
    assert non_claim_reason(sentence, question="What is the capital of France?") == reason


def test_sentence_splitter_marks_greetings_not_check_worthy():
    claims = SentenceDecomposer().decompose(ANSWER)
    assert [(c.check_worthy, c.note) for c in claims] == [
        (False, "greeting"), (True, None), (True, None), (False, "greeting")]
    assert spans_text(ANSWER, claims[1].char_spans) == claims[1].text


def test_llm_word_aligner_narrows_spans_to_listed_words():
    from claims.llm_align import LLMWordAligner

    answer = "Paris, the capital of France, is known for the Eiffel Tower and for its museums."
    decomposer_chat = ScriptedChat('["Paris is known for its museums."]')
    align_chat = ScriptedChat('Words: ["Paris", "known", "for", "its", "museums"]')
    dec = LLMDecomposer(decomposer_chat, aligner=LLMWordAligner(align_chat)).decompose_report(answer)
    [claim] = dec.claims
    assert [answer[a:b] for a, b in claim.char_spans] == ["Paris", "known for", "its museums"]
    assert dec.usage.calls == 2


def test_llm_word_aligner_keeps_content_word_spans_on_bad_reply():
    from claims.llm_align import LLMWordAligner

    answer = "Paris, the capital of France, is known for the Eiffel Tower."
    plain = LLMDecomposer(ScriptedChat('["Paris is the capital of France."]')).decompose_report(answer)
    aligned = LLMDecomposer(ScriptedChat('["Paris is the capital of France."]'),
                            aligner=LLMWordAligner(ScriptedChat("no idea"))).decompose_report(answer)
    assert aligned.claims == plain.claims


@pytest.mark.embedded
def test_embedded_model_decomposes_or_falls_back_never_loses_claims(tmp_path):
    from franq import registry
    from franq.config import FranqConfig
    from franq.lm import CausalLM

    answer = "Sure! The Eiffel Tower is in Paris. It was built in 1889 [1]."
    config = FranqConfig.from_dict({"decomposer": {"name": "llm", "max_tokens": 64, "cache_dir": str(tmp_path)}})
    dec = registry.build("decomposers", "llm", config, CausalLM.load())
    report = dec.decompose_report(answer)
    assert report.claims[0].text == "Sure!" and not report.claims[0].check_worthy
    assert any(c.check_worthy and c.char_spans for c in report.claims)
    assert report.method in ("llm", "llm->sentence") and report.usage.calls >= 1


def test_multi_sentence_claim_is_split():
    parsed = parse_claim_list('["Ann is tall. Bob is short [2].", "Eve is kind."]')
    assert list(parsed.claims) == ["Ann is tall.", "Bob is short.", "Eve is kind."]
    assert "split 1 multi-sentence claim(s) into sentences" in parsed.repairs


MIXED_ANSWER = ("The Eiffel Tower was built from 1887 to 1889. It was designed by Gustave Eiffel. "
          "The tower is made of solid gold. It is located in Berlin, Germany.")


class OneClaimChat:
    """A chat model that, like the embedded one, returns the true claims and skips the false sentences."""

    name = "skips-false"

    def complete(self, messages, *, max_tokens):
        return ChatReply(json.dumps(["The Eiffel Tower was built from 1887 to 1889.",
                                     "The tower was designed by Gustave Eiffel."]), calls=1)


def test_sentences_the_llm_decomposer_misses_are_scored_from_the_sentence_splitter(tiny_lm, tmp_path):
    dec = LLMDecomposer(OneClaimChat()).decompose_report(MIXED_ANSWER)
    texts = [c.text for c in dec.claims]
    assert texts == ["The Eiffel Tower was built from 1887 to 1889.", "The tower was designed by Gustave Eiffel.",
                     "The tower is made of solid gold.", "It is located in Berlin, Germany."]
    assert all(c.check_worthy for c in dec.claims)
    assert [w for w in dec.warnings if "scored it as a sentence claim" in w] == [
        "llm decomposer: no claim covers sentence 2 ('The tower is made of solid gold.'); scored it as a sentence claim",
        "llm decomposer: no claim covers sentence 3 ('It is located in Berlin, Germany.'); scored it as a sentence "
        "claim"]
    result = make_franq(tiny_lm, decomposer=LLMDecomposer(OneClaimChat())).score(
        "Tell me about the tower.", ["The Eiffel Tower is in Paris."], MIXED_ANSWER)
    assert [c.status for c in result.claims] == ["scored"] * 4
    assert result.claims[3].claim.text == "It is located in Berlin, Germany." and result.claims[3].p_true_raw is not None
