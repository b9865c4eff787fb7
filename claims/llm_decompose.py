"""LLM decomposition: a chat model lists the atomic, self-contained claims of a whole
answer (paper section 3.1 and appendix B.2, Figure 5; the prompt here is our own).

Any :class:`~claims.chat.ChatModel` serves: an OpenAI-compatible server
(:class:`~claims.chat.OpenAIChat`) or a local model (:class:`franq.lm.chat.LocalChat`).
Calls run at temperature 0 and are cached on disk keyed by model, prompt version and
answer, so a rerun costs nothing and gives the same claims.

Small models return broken output. The reply is parsed leniently (code fences, prose
around the list, Python-style quotes, a truncated list, numbered lines); empty and
duplicated claims are dropped with a warning. If nothing usable comes back the model is
asked once more; if that fails too (or the call itself fails) the answer falls back to
the offline sentence splitter, with a warning in the result. Answer sentences that carry
no fact (greetings, refusals, headings, restated questions) are kept as not check-worthy
claims. Each claim is aligned to the answer by :func:`claims.align.locate_claim`.
"""
from __future__ import annotations

import ast
import hashlib
import json
import logging
import os
import re
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from claims.align import answer_units, locate_claim
from claims.chat import ChatError, ChatModel
from claims.checkworthy import non_claim_reason
from claims.decompose import SentenceDecomposer, cut_spans, spans_text, split_sentences
from claims.paper_prompts import PAPER_DECOMPOSE, PAPER_DECOMPOSE_VERSION
from claims.text import CITATION_RE, content_words
from claims.types import Claim, Decomposition, DecompositionUsage

log = logging.getLogger(__name__)

PROMPT_VERSION = "atomic-v2"
SYSTEM = "You split texts into atomic factual claims. You reply with a JSON array of strings only."
EXAMPLE_TEXT = ("Marie Curie, born in Warsaw, won two Nobel Prizes. She discovered polonium with "
                "Pierre Curie [2].")
EXAMPLE_CLAIMS = ["Marie Curie was born in Warsaw.", "Marie Curie won two Nobel Prizes.",
                  "Marie Curie discovered polonium.", "Marie Curie discovered polonium with Pierre Curie."]
INSTRUCTIONS = """Decompose the text into atomic claims.
Rules:
- One fact per claim: split sentences that state several facts.
- Each claim must be understandable on its own: replace pronouns and references such as "it" or "this method" with what they refer to.
- Keep the wording of the text. Do not add, correct or judge facts.
- Leave out greetings, questions, headings, refusals and remarks about the answer itself.
- Reply with a JSON array of strings and nothing else.

Text: {text}"""
PROMPTS = ("franq", "paper")

REPAIR = ("Your reply could not be used ({problem}). Reply with only a JSON array of the claims "
          "of the text, nothing else.")

_FENCE_RE = re.compile(r"```[a-zA-Z]*\s*(.*?)(?:```|$)", re.DOTALL)
_STRING_RE = re.compile(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'')
_LINE_ITEM_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)]|claim\s*\d*:)\s+(.+?)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class ParsedClaims:
    """Claims read from one reply, and what had to be repaired to read them."""

    claims: tuple[str, ...]
    repairs: tuple[str, ...] = ()
    problem: str | None = None  # why no claims could be read


def parse_claim_list(reply: str) -> ParsedClaims:
    """Read a list of claim strings from a model reply, leniently.

    Accepts a JSON array; the same inside code fences or prose; a Python list literal;
    a list cut off mid-way (the complete strings are kept); objects with a "claim" or
    "text" field; and, failing a list, bulleted or numbered lines. An item holding several
    sentences is split into them; empty and duplicated claims are dropped. Every repair is
    named in ``repairs``.
    """
    text = reply.strip()
    repairs: list[str] = []
    if not text:
        return ParsedClaims((), (), "empty reply")
    fence = _FENCE_RE.search(text)
    if fence:
        text = fence.group(1).strip()
        repairs.append("removed a code fence")
    items = _read_list(text, repairs)
    if items is None:
        items = [m.group(1) for m in map(_LINE_ITEM_RE.match, text.splitlines()) if m]
        if not items:
            return ParsedClaims((), tuple(repairs), "no list of claims in the reply")
        repairs.append("read claims from list lines instead of a JSON array")
    claims: list[str] = []
    seen: set[str] = set()
    n_empty = n_dup = n_split = 0
    pieces: list[str] = []
    for item in items:
        if isinstance(item, dict):
            item = item.get("claim") or item.get("text") or ""
        c = " ".join(CITATION_RE.sub("", str(item)).split()).strip(" \"'")
        sentences = split_sentences(c) if c else []
        if len(sentences) > 1:  # a small model copied whole passages: one sentence, one claim
            n_split += 1
            pieces += [c[a:b] for a, b in sentences]
        else:
            pieces.append(c)
    for c in pieces:
        if not c or not content_words(c):
            n_empty += 1
            continue
        key = c.lower().rstrip(".")
        if key in seen:
            n_dup += 1
            continue
        seen.add(key)
        claims.append(c)
    if n_split:
        repairs.append(f"split {n_split} multi-sentence claim(s) into sentences")
    if n_empty:
        repairs.append(f"dropped {n_empty} empty claim(s)")
    if n_dup:
        repairs.append(f"dropped {n_dup} duplicated claim(s)")
    return ParsedClaims(tuple(claims), tuple(repairs), None if claims else "the list holds no claims")


def _read_list(text: str, repairs: list[str]) -> list | None:
    start = text.find("[")
    if start < 0:
        return None
    if start > 0:
        repairs.append("ignored text before the list")
    try:  # the first complete JSON value; anything after it is ignored
        value, end = json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        value, end = None, start
    if isinstance(value, list):
        if text[end:].strip():
            repairs.append("ignored text after the list")
        return value
    close = text.find("]", start)
    while close > start:  # a Python list literal: ['a', 'b']
        try:
            value = ast.literal_eval(text[start:close + 1])
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            close = text.find("]", close + 1)
            continue
        if isinstance(value, list):
            repairs.append("read a Python list literal")
            return value
        break
    # Truncated or otherwise broken: keep the complete quoted strings of the first list.
    strings = []
    for m in _STRING_RE.finditer(text, start):
        between = text[start if not strings else strings[-1][1]:m.start()]
        if strings and "]" in between:
            break
        strings.append((_unescape(m.group(1) if m.group(1) is not None else m.group(2)), m.end()))
    if not strings:
        return None
    repairs.append("repaired a broken or truncated list")
    return [s for s, _ in strings]


def _unescape(s: str) -> str:
    try:
        return json.loads(f'"{s}"')
    except ValueError:
        return s.replace('\\"', '"').replace("\\'", "'")


def build_messages(answer: str, prompt: str = "franq") -> list[dict[str, str]]:
    """System prompt, one worked example as a chat turn, then the answer to decompose
    (``prompt="paper"``: FRANQ's Figure 5 as the one user turn)."""
    if prompt == "paper":
        return [{"role": "user", "content": PAPER_DECOMPOSE.replace("{text}", answer.strip())}]
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": INSTRUCTIONS.format(text=EXAMPLE_TEXT)},
            {"role": "assistant", "content": json.dumps(EXAMPLE_CLAIMS)},
            {"role": "user", "content": INSTRUCTIONS.format(text=answer.strip())}]


class DecompositionCache:
    """Raw model replies on disk, one JSON file per (model, prompt version, answer).

    Replies are stored, not parsed claims, so parser fixes apply to cached answers too.
    Writes are atomic (temporary file + rename), so concurrent runs are safe.
    """

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)

    def key(self, model: str, answer: str, max_tokens: int, version: str = PROMPT_VERSION) -> str:
        blob = json.dumps([model, version, max_tokens, answer], ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def get(self, key: str) -> list[str] | None:
        path = self.directory / key[:2] / f"{key}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        replies = data.get("replies") if isinstance(data, dict) else None
        return replies if isinstance(replies, list) and all(isinstance(r, str) for r in replies) else None

    def put(self, key: str, model: str, replies: list[str], version: str = PROMPT_VERSION) -> None:
        path = self.directory / key[:2] / f"{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"model": model, "prompt_version": version, "replies": replies}, f,
                      ensure_ascii=False)
        os.replace(tmp, path)


class LLMDecomposer:
    """Atomic claims from a chat model, with lenient parsing, one repair retry and a
    per-answer fallback to the sentence splitter (never an exception, never a lost claim).

    ``cache_dir=None`` disables the disk cache; ``concurrency`` bounds the answers in
    flight in :meth:`decompose_many` (a local model serializes its own calls).
    ``aligner`` (e.g. :class:`claims.llm_align.LLMWordAligner`) optionally refines each
    claim's spans with the words the model says express it; the default is content-word
    alignment only.
    """

    name = "llm"

    def __init__(self, chat: ChatModel, *, cache_dir: str | Path | None = None, max_tokens: int = 1024,
                 concurrency: int = 4, aligner=None, prompt: str = "franq"):
        if prompt not in PROMPTS:
            raise ValueError(f"prompt: expected one of {list(PROMPTS)}, got {prompt!r}")
        self.prompt = prompt
        self.version = PAPER_DECOMPOSE_VERSION if prompt == "paper" else PROMPT_VERSION
        if concurrency < 1:
            raise ValueError(f"concurrency: expected a positive integer, got {concurrency!r}")
        self.chat = chat
        self.cache = DecompositionCache(cache_dir) if cache_dir is not None else None
        self.max_tokens = max_tokens
        self.concurrency = concurrency
        self.aligner = aligner
        self._fallback = SentenceDecomposer()

    def decompose(self, answer: str) -> list[Claim]:
        return list(self.decompose_report(answer).claims)

    def decompose_many(self, answers: Sequence[str]) -> list[Decomposition]:
        if self.concurrency == 1 or len(answers) < 2:
            return [self.decompose_report(a) for a in answers]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(answers))) as pool:
            return list(pool.map(self.decompose_report, answers))

    def decompose_report(self, answer: str) -> Decomposition:
        """Claims of one answer with warnings and usage (see :class:`Decomposition`)."""
        units = answer_units(answer)
        if not units:
            return Decomposition((), (), DecompositionUsage(), self.name)
        key = self.cache.key(self.chat.name, answer, self.max_tokens, self.version) if self.cache else None
        cached = self.cache.get(key) if self.cache else None
        replies: list[str] = []
        usage = DecompositionUsage(cache_hits=1 if cached is not None else 0)
        messages = build_messages(answer, self.prompt)
        claims: list[Claim] | None = None
        warnings: list[str] = []
        problem, call_failed = None, False
        for attempt in range(2):
            if cached is not None and attempt < len(cached):
                text = cached[attempt]
            else:
                try:
                    reply = self.chat.complete(messages, max_tokens=self.max_tokens)
                except ChatError as exc:
                    problem, call_failed = f"the model call failed: {exc}", True
                    break
                usage += DecompositionUsage(reply.calls, reply.prompt_tokens, reply.completion_tokens)
                text = reply.text
            replies.append(text)
            parsed = parse_claim_list(text)
            if parsed.problem is None:
                texts, echoed = _drop_example_echo(answer, parsed.claims)
                claims = self._place(answer, units, texts)
                if any(c.char_spans for c in claims if c.check_worthy):
                    warnings += [f"llm decomposer: {r}" for r in parsed.repairs]
                    if echoed:
                        warnings.append(f"llm decomposer: dropped {echoed} claim(s) copied from the prompt's example")
                    missed, found = _uncovered(answer, units, claims)
                    warnings += missed
                    claims = _merge(claims, found)
                    break
                problem = "no claim of the reply occurs in the answer"
                claims = None
            else:
                problem = parsed.problem
            messages = messages + [{"role": "assistant", "content": text},
                                   {"role": "user", "content": REPAIR.format(problem=problem)}]
        # Cache successes and unusable replies, not failed calls (they may work next time).
        if self.cache is not None and replies and replies != cached and (claims is not None or not call_failed):
            self.cache.put(key, self.chat.name, replies, self.version)
        if claims is None:
            retried = " after one retry" if len(replies) > 1 else ""
            warnings.append(f"llm decomposer: {problem}{retried}; fell back to the sentence splitter")
            usage += DecompositionUsage(fallbacks=1)
            return Decomposition(tuple(self._fallback.decompose(answer)), tuple(warnings), usage,
                                 f"{self.name}->sentence")
        if self.aligner is not None:
            refined = []
            for c in claims:
                c, cost = self.aligner.refine(answer, c, units)
                refined.append(c)
                usage += cost
            claims = refined
        return Decomposition(tuple(claims), tuple(warnings), usage, self.name)

    def _place(self, answer: str, units: list[tuple[int, int]], texts: Sequence[str]) -> list[Claim]:
        """Locate each claim in the answer, add the answer's non-claim sentences as not
        check-worthy claims, and order everything by position in the answer."""
        placed: list[tuple[float, int, Claim]] = []
        skip: set[int] = set()
        for k, (s, e) in enumerate(units):
            unit_text = spans_text(answer, cut_spans(answer, s, e))
            reason = non_claim_reason(unit_text)
            if reason is not None:
                skip.add(k)
                placed.append((s, -1, Claim(unit_text, cut_spans(answer, s, e), sentence=k,
                                            check_worthy=False, note=reason)))
        near = None
        for i, text in enumerate(texts):
            claim = locate_claim(answer, text, sentence=None, units=units, near=near)
            reason = non_claim_reason(text)
            if reason is not None:
                claim = Claim(claim.text, claim.char_spans, sentence=claim.sentence, check_worthy=False,
                              note=reason)
            elif claim.char_spans and claim.sentence in skip:
                claim = Claim(claim.text, claim.char_spans, sentence=claim.sentence, check_worthy=False,
                              note="restates a sentence that is not a claim")
            if claim.char_spans:
                near = claim.sentence
            start = claim.char_spans[0][0] if claim.char_spans else (units[near][0] if near is not None else 0)
            placed.append((start, i, claim))
        placed.sort(key=lambda t: (t[0], t[1]))
        return [c for _, _, c in placed]


def _drop_example_echo(answer: str, texts: Sequence[str]) -> tuple[list[str], int]:
    """Small models copy the prompt's example; such claims are not about the answer."""
    example = {c.lower() for c in EXAMPLE_CLAIMS}
    keep = [t for t in texts if t.lower() not in example or t.lower() in answer.lower()]
    return keep, len(texts) - len(keep)


MISSED_NOTE = "the llm decomposer missed this sentence: scored as a whole sentence"


def _uncovered(answer: str, units: list[tuple[int, int]], claims: list[Claim]) -> tuple[list[str], list[Claim]]:
    """Each answer sentence that no claim covers (the model skipped it) becomes a claim of
    its own, as the sentence splitter would make it, and a warning says so: a sentence the
    model left out is still scored (small models tend to drop exactly the false ones)."""
    covered = {c.sentence for c in claims if c.char_spans}
    warnings, found = [], []
    for k, (s, e) in enumerate(units):
        if k in covered:
            continue
        spans = cut_spans(answer, s, e)
        text = spans_text(answer, spans)
        if not text.strip():
            continue
        reason = non_claim_reason(text)
        found.append(Claim(text, spans, sentence=k, check_worthy=reason is None,
                           note=reason if reason is not None else MISSED_NOTE))
        short = text if len(text) <= 60 else text[:57] + "..."
        warnings.append(f"llm decomposer: no claim covers sentence {k} ({short!r}); scored it as a sentence claim")
    return warnings, found


def _merge(claims: list[Claim], extra: list[Claim]) -> list[Claim]:
    """``claims`` and ``extra`` in answer order (claims without spans keep their place)."""
    if not extra:
        return claims
    out, pending = [], sorted(extra, key=lambda c: c.char_spans[0][0])
    for c in claims:
        while pending and c.char_spans and pending[0].char_spans[0][0] < c.char_spans[0][0]:
            out.append(pending.pop(0))
        out.append(c)
    return out + pending


__all__ = ["PROMPT_VERSION", "DecompositionCache", "LLMDecomposer", "ParsedClaims", "build_messages",
           "parse_claim_list"]
