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

import re
from collections.abc import Sequence
from dataclasses import dataclass

from franq.errors import InputError
from franq.types import Passage

# ---------------------------------------------------------------- the prompt style
PROMPT_STYLES = ("franq", "paper")


@dataclass(frozen=True)
class PromptsConfig:
    """``[prompts]``: each prompt family in franq's wording (``franq``, the default) or the
    paper's, verbatim (``paper``). ``style`` sets every family; ``answer`` (the RAG /
    closed-book answer prompt: FRANQ fig. 3 short form, fig. 4 long form), ``decompose``
    (fig. 5) and ``align`` (fig. 6) override it for theirs (unset: ``style``). The
    answering application's answer checks read ``style`` unless their ``prompt`` setting says."""

    style: str = "franq"
    """Every prompt family's wording: ``franq`` or ``paper`` (verbatim)."""
    answer: str | None = None
    """The RAG / closed-book answer prompt (unset: ``style``)."""
    decompose: str | None = None
    """The LLM decomposer's prompt (unset: ``style``)."""
    align: str | None = None
    """The LLM aligner's prompt (unset: ``style``)."""

    def __post_init__(self):
        for key in ("style", "answer", "decompose", "align"):
            value = getattr(self, key)
            if value is not None and value not in PROMPT_STYLES:
                raise InputError(f"config 'prompts.{key}': expected one of {list(PROMPT_STYLES)}, got {value!r}")

    def of(self, family: str) -> str:
        """The style of ``family`` (``answer``, ``decompose``, ``align``)."""
        return getattr(self, family) or self.style

# ---------------------------------------------------------------- the answer prompt
PROMPT_VERSION = "rag-v1"
SYSTEM_PROMPT = "You are a helpful assistant. Answer questions accurately and concisely."
INSTRUCTION = "Answer the question."
SHORT_INSTRUCTION = "Answer the question with a short phrase on a single line."
"""Short-form prompt instruction (the paper's short-form prompt ends "Answer (single line):")."""
SHORT_ANSWER_TOKENS = 64
"""The generated short answer's budget when none is given: the samples keep theirs
(``uq.max_sample_tokens``, what the short-form calibrator was fitted on), but the answer
shown to a user runs to its end of line, up to this many tokens."""
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s|$)")


def answer_end(text: str) -> str:
    """``text`` (a generation cut at its token budget) up to its last sentence end, when it
    has one; else as it is."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    return text[:ends[-1]].rstrip() if ends else text


# ---------------------------------------------------------------- FRANQ's answer prompts, verbatim (paper 001)
PAPER_PROMPT_VERSION = "franq-paper-v1"
"""The answer prompt's version with ``[prompts] answer = "paper"`` (no shipped calibrator is
fitted for it, so none applies: the stack says which prompt ran)."""
PAPER_SHORT_HEAD = "Contents (not necessarily includes answer to the following question):\n"
PAPER_SHORT_PASSAGE = "Title: {title}\nContent: {text}\n"
PAPER_SHORT_TAIL = "Question: {question}\nAnswer (single line):"
"""FRANQ (001) appendix B.1, Figure 3: the short-form prompt, passages as ``Title:`` /
``Content:`` pairs (five in the paper)."""
PAPER_LONG_HEAD = ("Using the context provided below, answer the question with a balanced\n"
                   "approach. Ensure your response contains an equal number of claims or\n"
                   "details drawn directly from the context and from your own knowledge:\n")
PAPER_LONG_PASSAGES = "Context: {passages}\n"
PAPER_LONG_TAIL = "Question: {question}\nAnswer:"
"""FRANQ (001) appendix B.2, Figure 4: the "balanced" long-form prompt, line breaks as
printed; passages as ``passage i:{text}`` lines after ``Context: `` (three in the paper)."""


def paper_answer_text(question: str, passages: Sequence[Passage] | None, *, short: bool) -> str:
    """Figure 3 (``short``) or Figure 4, filled. ``passages=None`` (closed book, for
    UQ_unfaith) removes the passages block only, as franq's own prompt does (paper eq. 3);
    the paper does not print its closed-book prompt. A passage without a title gets an
    empty ``Title:``."""
    if short:
        body = "" if passages is None else PAPER_SHORT_HEAD + "".join(
            PAPER_SHORT_PASSAGE.format(title=p.title or "", text=p.text) for p in passages)
        return body + PAPER_SHORT_TAIL.format(question=question)
    body = PAPER_LONG_HEAD
    if passages is not None:
        body += PAPER_LONG_PASSAGES.format(passages="\n".join(f"passage {i}:{p.text}" for i, p in enumerate(passages, 1)))
    return body + PAPER_LONG_TAIL.format(question=question)


def answer_prompt_version(style: str) -> str:
    return PAPER_PROMPT_VERSION if style == "paper" else PROMPT_VERSION


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


# ---------------------------------------------------------------- rendering
def chat_text(tokenizer, messages: list[dict[str, str]], *, fallback: str) -> str:
    """``messages`` through the tokenizer's chat template, up to the start of the reply;
    ``fallback`` for a tokenizer without a chat template."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return fallback


def answer_prompt_text(tokenizer, question: str, passages: Sequence[Passage] | None, *,
                       instruction: str | None = None, style: str = "franq") -> str:
    """The answer prompt up to the start of the answer. ``passages=None`` gives the
    closed-book prompt: identical, with the passages block removed (paper eq. 3).
    ``instruction`` replaces :data:`INSTRUCTION` (short form: :data:`SHORT_INSTRUCTION`).
    ``style="paper"``: FRANQ's Figure 3 (short form: ``instruction`` is
    :data:`SHORT_INSTRUCTION`) or Figure 4 (otherwise), as the one user turn of the chat
    template (the paper does not say how it wrapped them), as-is without one."""
    if style == "paper":
        text = paper_answer_text(question, passages, short=instruction == SHORT_INSTRUCTION)
        return chat_text(tokenizer, [{"role": "user", "content": text}], fallback=text + " ")
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
