"""Every prompt franq sends to a language model, and the one place passages are formatted.

Each prompt family has a version string; change a template's text and you change its
version (the shipped calibrators are fitted for ``PROMPT_VERSION = "rag-v1"``, and the
benchmark's caches are keyed on these texts). ``tests/test_prompts.py`` pins each family's
text to its version.

==========================  ============================  ===============================
family                      version                       used by
==========================  ============================  ===============================
answer (RAG / closed book)  :data:`PROMPT_VERSION`        CausalLM.rag_prompt, short form
equivalence judge           :data:`EQUIVALENCE_VERSION`   franq.equivalence.lm_judge.LMJudge
faithfulness judge          :data:`FAITHFULNESS_VERSION`  franq.faithfulness.chat_judge
P(True) follow-up           :data:`P_TRUE_VERSION`        franq.evaluation.p_true.PTrue
==========================  ============================  ===============================

The claim decomposition and alignment prompts live in ``claims/llm_decompose.py``
(``PROMPT_VERSION = "atomic-v2"``) and ``claims/llm_align.py`` (``"words-v1"``): the
``claims`` package never imports ``franq``.

Each ``*_text`` function renders a prompt through the tokenizer's chat template, or, for a
tokenizer without one, as the plain-text fallback written next to it. The ``*_LABELS``
pairs are the answer words a prompt asks for (first word, second word, each as the
spellings whose first tokens count; see :mod:`franq.lm.labels`).

This module needs no torch: configuration and calibration code read versions from it.
"""
from __future__ import annotations

from collections.abc import Sequence

from franq.types import Passage

# ---------------------------------------------------------------- the answer prompt
PROMPT_VERSION = "rag-v1"
SYSTEM_PROMPT = "You are a helpful assistant. Answer questions accurately and concisely."
INSTRUCTION = "Answer the question."
SHORT_INSTRUCTION = "Answer the question with a short phrase on a single line."
"""Short-form prompt instruction (the paper's short-form prompt ends "Answer (single line):")."""

# ---------------------------------------------------------------- the equivalence judge
EQUIVALENCE_VERSION = "equivalence-v1"
EQUIVALENCE_PROMPT = ("Question: {question}\nAnswer A: {a}\nAnswer B: {b}\n"
                      "Do Answer A and Answer B mean the same thing? Reply yes or no.")
EQUIVALENCE_LABELS = (("yes", "Yes"), ("no", "No"))

# ---------------------------------------------------------------- the faithfulness judge
FAITHFULNESS_VERSION = "faithfulness-judge-v1"
FAITHFULNESS_SYSTEM = "You are a careful fact checker. You answer only yes or no."
FAITHFULNESS_TEMPLATE = ("Passages:\n{context}\n\nClaim: {claim}\n\n"
                         "Is the claim fully supported by the passages? Answer yes or no.")
FAITHFULNESS_LABELS = (("yes", "Yes", "YES"), ("no", "No", "NO"))
"""Counted with and without a leading space (``leading_space=True``)."""

# ---------------------------------------------------------------- the P(True) follow-up
P_TRUE_VERSION = "p-true-v1"
ANSWER_QUESTION = "Is your answer true? Reply with one word: True or False."
CLAIM_QUESTION = 'Consider this claim from your answer: "{claim}"\nIs the claim true? Reply with one word: True or False.'
P_TRUE_LABELS = (("True",), ("False",))


# ---------------------------------------------------------------- passages
def format_passages(passages: Sequence[Passage]) -> str:
    """Passages as the answer prompt shows them: numbered from 1, ``[i] title`` on a line
    of its own above the text (``[i] text`` without a title), blank lines between."""
    return "\n\n".join((f"[{i}] {p.title}\n" if p.title else f"[{i}] ") + p.text
                       for i, p in enumerate(passages, 1))


def passages_context(passages: Sequence[Passage]) -> str:
    """Passages as faithfulness backends read them: ``title. text`` (or the text alone),
    blank lines between. The shipped faithfulness maps were fitted on this exact format."""
    return "\n\n".join(f"{p.title}. {p.text}" if p.title else p.text for p in passages)


# ---------------------------------------------------------------- rendering
def chat_text(tokenizer, messages: list[dict[str, str]], *, fallback: str) -> str:
    """``messages`` through the tokenizer's chat template, up to the start of the reply;
    ``fallback`` for a tokenizer without a chat template."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return fallback


def answer_prompt_text(tokenizer, question: str, passages: Sequence[Passage] | None, *,
                       instruction: str | None = None) -> str:
    """The answer prompt up to the start of the answer. ``passages=None`` gives the
    closed-book prompt: identical, with the passages block removed (paper eq. 3).
    ``instruction`` replaces :data:`INSTRUCTION` (short form: :data:`SHORT_INSTRUCTION`)."""
    messages = answer_messages(question, passages, instruction=instruction)
    return chat_text(tokenizer, messages, fallback=f"{SYSTEM_PROMPT}\n\n{messages[1]['content']}\nAnswer: ")


def answer_messages(question: str, passages: Sequence[Passage] | None, *,
                    instruction: str | None = None) -> list[dict[str, str]]:
    """The answer prompt as chat messages (system, user); see :func:`answer_prompt_text`."""
    body = (instruction or INSTRUCTION) + "\n\n"
    if passages is not None:
        body += "Passages:\n" + format_passages(passages) + "\n\n"
    body += f"Question: {question}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": body}]


def equivalence_prompt_text(tokenizer, question: str, a: str, b: str) -> str:
    """Do answers ``a`` and ``b`` to ``question`` mean the same? (reply yes or no)"""
    body = EQUIVALENCE_PROMPT.format(question=question, a=a, b=b)
    return chat_text(tokenizer, [{"role": "user", "content": body}], fallback=body + "\n")


def faithfulness_messages(context: str, claim: str) -> list[dict[str, str]]:
    """Is ``claim`` supported by ``context``? (reply yes or no), as chat messages."""
    return [{"role": "system", "content": FAITHFULNESS_SYSTEM},
            {"role": "user", "content": FAITHFULNESS_TEMPLATE.format(context=context, claim=claim)}]


def faithfulness_prompt_text(tokenizer, context: str, claim: str) -> str:
    messages = faithfulness_messages(context, claim)
    return chat_text(tokenizer, messages, fallback=f"{FAITHFULNESS_SYSTEM}\n\n{messages[1]['content']}\nAnswer:")


def followup_text(tokenizer, answer: str, question: str) -> str:
    """The text that follows a rendered answer prompt + ``answer`` to ask ``question``
    about it: the end of the answer turn, a user turn holding ``question`` and the start
    of the assistant's reply (P(True), Kadavath et al. 2022)."""
    if getattr(tokenizer, "chat_template", None):
        turns = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "Q"}]
        head = tokenizer.apply_chat_template(turns, tokenize=False, add_generation_prompt=True) + answer
        full = tokenizer.apply_chat_template(turns + [{"role": "assistant", "content": answer},
                                                      {"role": "user", "content": question}],
                                             tokenize=False, add_generation_prompt=True)
        if full.startswith(head):
            return full[len(head):]
    return f"\n\n{question}\nAnswer: "
