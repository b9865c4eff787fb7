"""Prompt texts: each family is pinned to its version, and the two passage formats are exact.

The shipped calibrators are fitted for prompt version "rag-v1" and the faithfulness maps on
``passages_context``; the benchmark caches are keyed on these texts. Changing a text means a
new version (and new pins here), never a silent edit.
"""
from __future__ import annotations

import hashlib
from types import SimpleNamespace

from franq.faithfulness.base import passages_context
from franq.lm import prompts as P
from franq.types import Passage

PLAIN = SimpleNamespace(chat_template=None)  # a tokenizer without a chat template: the fallbacks
PASSAGES = [Passage("The tower was built in 1889.", "Eiffel Tower"), Passage("Gustave Eiffel was an engineer.")]

FAMILIES = {
    P.PROMPT_VERSION: lambda: [P.SYSTEM_PROMPT, P.INSTRUCTION, P.SHORT_INSTRUCTION,
                               P.answer_prompt_text(PLAIN, "When?", PASSAGES),
                               P.answer_prompt_text(PLAIN, "When?", None, instruction=P.SHORT_INSTRUCTION)],
    P.EQUIVALENCE_VERSION: lambda: [P.EQUIVALENCE_PROMPT, repr(P.EQUIVALENCE_LABELS),
                                    P.equivalence_prompt_text(PLAIN, "Where?", "Paris", "Lyon")],
    P.FAITHFULNESS_VERSION: lambda: [P.FAITHFULNESS_SYSTEM, P.FAITHFULNESS_TEMPLATE, repr(P.FAITHFULNESS_LABELS),
                                     P.faithfulness_prompt_text(PLAIN, "ctx", "claim")],
    P.P_TRUE_VERSION: lambda: [P.ANSWER_QUESTION, P.CLAIM_QUESTION, repr(P.P_TRUE_LABELS),
                               P.followup_text(PLAIN, "Paris.", P.ANSWER_QUESTION)],
}
PINS = {
    "rag-v1": "0c6a028a8d967cfa50def515e8f95a5f4e8c175713dae0bb7a1a6a7cf1db737d",
    "equivalence-v1": "d4feab554b57fef022d1ffac8e02e01823ca7bd7335c4e10efed0584fa3c6668",
    "faithfulness-judge-v1": "50173309013cb31f4e91a118715777b2df5bc55eac1c6374812c756f2b0c9fda",
    "p-true-v1": "a21abfd4ea81110c283aa841375ce9b0745107d8b628c4c6bcf2fb511924818b",
}


def test_each_prompt_family_is_pinned_to_its_version():
    assert set(FAMILIES) == set(PINS)
    for version, texts in FAMILIES.items():
        digest = hashlib.sha256("\x00".join(texts()).encode()).hexdigest()
        assert digest == PINS[version], f"the {version!r} prompts changed: give them a new version and pin {digest}"


def test_the_answer_prompt_numbers_the_passages():
    assert P.format_passages(PASSAGES) == "[1] Eiffel Tower\nThe tower was built in 1889.\n\n[2] Gustave Eiffel was an engineer."
    assert P.answer_prompt_text(PLAIN, "When?", PASSAGES) == (
        "You are a helpful assistant. Answer questions accurately and concisely.\n\nAnswer the question.\n\n"
        "Passages:\n[1] Eiffel Tower\nThe tower was built in 1889.\n\n[2] Gustave Eiffel was an engineer.\n\n"
        "Question: When?\nAnswer: ")
    assert P.answer_prompt_text(PLAIN, "When?", None) == (
        "You are a helpful assistant. Answer questions accurately and concisely.\n\nAnswer the question.\n\n"
        "Question: When?\nAnswer: ")


def test_the_faithfulness_context_is_title_dot_text_blocks():
    assert passages_context(PASSAGES) == "Eiffel Tower. The tower was built in 1889.\n\nGustave Eiffel was an engineer."
    assert passages_context([]) == ""


def test_the_chat_template_renders_the_same_messages(tiny_lm):
    tok = tiny_lm.tokenizer
    text = P.answer_prompt_text(tok, "When?", PASSAGES)
    assert text == tok.apply_chat_template(
        [{"role": "system", "content": P.SYSTEM_PROMPT},
         {"role": "user", "content": f"{P.INSTRUCTION}\n\nPassages:\n{P.format_passages(PASSAGES)}\n\nQuestion: When?"}],
        tokenize=False, add_generation_prompt=True)
    assert tiny_lm.render("When?", PASSAGES) == text
