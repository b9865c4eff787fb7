"""LLM-assisted alignment (paper appendix B.2, Figure 6; our own prompt by default, the
paper's with ``prompt="paper"``: :data:`claims.paper_prompts.PAPER_ALIGN`): the chat model
lists the words of the claim's sentence that express the claim, and those words, found in
order in the sentence, become the claim's character spans.

Optional refinement on top of :func:`claims.align.locate_claim`, which picks the sentence:
if the model's reply is unusable, or none of its words occurs in the sentence, the claim
keeps its content-word alignment, so the model can only narrow or widen spans inside the
sentence, never lose a claim.
"""
from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence

from claims.align import merge_word_spans
from claims.chat import ChatError, ChatModel
from claims.llm_decompose import parse_claim_list
from claims.paper_prompts import PAPER_ALIGN
from claims.text import WORD_RE
from claims.types import Claim, DecompositionUsage

ALIGN_PROMPT_VERSION = "words-v1"
INSTRUCTIONS = """Sentence: {sentence}
Claim: {claim}

Which words of the sentence express the claim? Copy them exactly, in the order they appear in the sentence. Reply with a JSON array of strings and nothing else.

Example
Sentence: Paris, the capital of France, is known for the Eiffel Tower.
Claim: Paris is the capital of France.
Words: ["Paris", "capital", "of", "France"]

Sentence: {sentence}
Claim: {claim}
Words:"""


class LLMWordAligner:
    """Refines a located claim's spans with the words a chat model says express it."""

    name = "llm-words"

    def __init__(self, chat: ChatModel, *, max_tokens: int = 128, prompt: str = "franq"):
        if prompt not in ("franq", "paper"):
            raise ValueError(f"prompt: expected 'franq' or 'paper', got {prompt!r}")
        self.chat = chat
        self.max_tokens = max_tokens if prompt == "franq" else max(max_tokens, 512)  # paper: every sentence
        self.prompt = prompt

    def refine(self, answer: str, claim: Claim, units: Sequence[tuple[int, int]]) -> tuple[Claim, DecompositionUsage]:
        if not claim.char_spans or not claim.check_worthy or not 0 <= claim.sentence < len(units):
            return claim, DecompositionUsage()
        s, e = units[claim.sentence]
        if self.prompt == "paper":
            prompt = PAPER_ALIGN.format(text=answer, claim=claim.text)
        else:
            prompt = INSTRUCTIONS.format(sentence=answer[s:e], claim=claim.text)
        try:
            reply = self.chat.complete([{"role": "user", "content": prompt}], max_tokens=self.max_tokens)
        except ChatError:
            return claim, DecompositionUsage()
        usage = DecompositionUsage(reply.calls, reply.prompt_tokens, reply.completion_tokens)
        words = (paper_sentence_words(reply.text, answer[s:e]) if self.prompt == "paper"
                 else _listed_words(reply.text))
        hits = find_words_in_order(answer, s, e, words)
        if not hits:
            return claim, usage
        return dataclasses.replace(claim, char_spans=merge_word_spans(answer, hits)), usage


def paper_sentence_words(reply: str, sentence: str) -> list[str]:
    """Figure 6's reply: the related words listed under the ``Sentence: "..."`` block whose
    sentence is ``sentence`` (compared by their words; the first block containing it, or
    contained in it, when none is equal). "No related words" or no such block: none."""
    want = [w.lower() for w in WORD_RE.findall(sentence)]
    blocks = re.split(r"(?im)^\s*Sentence:\s*", reply)[1:]
    best = None
    for block in blocks:
        head, _, rest = block.partition("\n")
        got = [w.lower() for w in WORD_RE.findall(head)]
        if got == want:
            best = rest
            break
        joined, target = " ".join(got), " ".join(want)
        if best is None and got and (joined in target or target in joined):
            best = rest
    if best is None or re.search(r"no related words", best, re.I):
        return []
    listed = re.findall(r'"([^"]+)"', best.split("Related words", 1)[-1].split(":", 1)[-1])
    return [w for item in listed for w in WORD_RE.findall(item)]


def _listed_words(reply: str) -> list[str]:
    """Words from the reply's list; items of several words are split into words."""
    text = reply.strip()
    start, end = text.find("["), text.rfind("]")
    items: list[str] = []
    if 0 <= start < end:
        try:
            value = json.loads(text[start:end + 1])
            items = [str(v) for v in value] if isinstance(value, list) else []
        except ValueError:
            items = []
    if not items:
        items = list(parse_claim_list(reply).claims)
    return [w for item in items for w in WORD_RE.findall(item)]


def find_words_in_order(answer: str, start: int, end: int, words: Sequence[str]) -> list[tuple[int, int]]:
    """Character ranges of ``words`` in ``answer[start:end]``, matched case-insensitively,
    each after the previous match; a word not found is skipped."""
    sentence = [(m.group().lower(), m.start(), m.end()) for m in WORD_RE.finditer(answer, start, end)]
    hits, pos = [], 0
    for w in words:
        w = w.lower()
        for i in range(pos, len(sentence)):
            if sentence[i][0] == w:
                hits.append(sentence[i][1:])
                pos = i + 1
                break
    return hits
