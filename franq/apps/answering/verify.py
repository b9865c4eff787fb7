"""Answering with faithfulness (paper 000): predictors of v, "is this answer faithful to
the passages?", and the fallbacks used when it is not.

Every predictor returns a score per :class:`~franq.apps.answering.items.QAItem`, higher = more
likely faithful; ``v = score >= threshold`` (a fitted
:class:`~franq.apps.answering.policy.ThresholdPolicy`).

    name          000 section   score
    trivial       4.2.2         1 (always answer)
    pre_answer    4.2.2         P(yes) to "do the passages contain the answer?" before answering
    nli           4.2.2, A.1    max over passages (20-word-overlap chunks) of a faithfulness
                                backend's P(passage supports 'The answer to the question "q" is: "a"')
    dual          4.1           perplexity of the closed-book answer without the passages minus that of
                                the RAG answer with them (``score``: perplexity, percentile, log_prob)
    p_true        (FRANQ)       FRANQ's answer-level P(true): the lowest claim P(true), calibrated
                                when a calibrator ran, else raw
    self_p_true   (003 5.1)     the model's own P(True) when asked "Is your answer true?"
    intrinsic, nli_prompt, p_true_sampled: 000 / 003 methods in :mod:`~franq.apps.answering.paper_methods`

Fallbacks (000 section 6): ``closed_book`` (the same model without passages), ``model``
(a second model, e.g. a larger one, with the passages: ``[fallbacks.model] path``) and ``abstain`` (no answer).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from franq.apps.answering.items import QAItem, max_by_owner
from franq import FranqError, InputError
from franq.apps.answering.paper_methods import dual_perplexity_scores
from franq.apps.answering.prompts import (
    AWF_HYPOTHESIS, NOMIRACL_LABELS, P_TRUE_000_LABELS, PRE_ANSWER_LABELS, PROMPT_STYLES, nomiracl_messages,
    p_true_000_messages, pre_answer_messages,
)
from franq.lm.openai_client import openai_client, server_name
from franq.lm.prompts import ANSWER_QUESTION, P_TRUE_LABELS, SHORT_INSTRUCTION, answer_messages
from franq.lm.prompts import answer_end

NLI_CHUNK_WORDS = 350
NLI_OVERLAP_WORDS = 20


@runtime_checkable
class AnswerCheck(Protocol):
    name: str

    def predict(self, items: Sequence[QAItem]) -> np.ndarray:
        """Score per item, higher = the answer is more likely faithful."""
        ...


class TrivialCheck:
    """Always v = 1 (000's "Trivial")."""

    name = "trivial"

    def predict(self, items: Sequence[QAItem]) -> np.ndarray:
        return np.ones(len(items), dtype=np.float64)


class PreAnswerCheck:
    """P(yes) that the passages contain the answer, asked before answering (000's
    Pre-Answering Prediction): label-word probabilities from a
    :class:`~franq.apps.answering.labelers.LocalLabeler` or :class:`~franq.apps.answering.labelers.OpenAILabeler`."""

    def __init__(self, labeler, *, prompt: str = "franq"):
        self.labeler = labeler
        self.prompt = _style(prompt, "pre_answer")
        self.name = f"pre_answer:{labeler.name}"

    def predict(self, items: Sequence[QAItem]) -> np.ndarray:
        """``prompt="paper"``: NoMIRACL's vanilla prompt (Thakur et al. 2024, which 000 cites),
        P("Yes, answer is present") against P("I don't know") from their first tokens."""
        if self.prompt == "paper":
            return self.labeler.probability([nomiracl_messages(it.question, [_passage(p) for p in it.passages])
                                             for it in items], NOMIRACL_LABELS)
        return self.labeler.probability([pre_answer_messages(it.question, it.context) for it in items],
                                        PRE_ANSWER_LABELS)


def overlapping_chunks(text: str, *, max_words: int = NLI_CHUNK_WORDS, overlap: int = NLI_OVERLAP_WORDS) -> list[str]:
    """Windows of ``max_words`` words, each starting ``max_words - overlap`` words after the last."""
    words = text.split()
    if len(words) <= max_words:
        return [" ".join(words)] if words else [text]
    step = max(1, max_words - overlap)
    return [" ".join(words[i:i + max_words]) for i in range(0, len(words) - overlap, step)]


class NLICheck:
    """000's Post-Answering NLI with any faithfulness backend (``predict(pairs)``): each
    passage is its own premise (long ones cut into ``chunk_words``-word chunks that overlap
    by 20 words), the hypothesis is 'The answer to the question "q" is: "a"', and the
    score is the max over premises."""

    def __init__(self, backend, *, chunk_words: int = NLI_CHUNK_WORDS, overlap: int = NLI_OVERLAP_WORDS):
        self.backend = backend
        self.chunk_words = chunk_words
        self.overlap = overlap
        self.name = f"nli:{backend.name}"

    def predict(self, items: Sequence[QAItem]) -> np.ndarray:
        pairs, owner = [], []
        for i, it in enumerate(items):
            hypothesis = AWF_HYPOTHESIS.format(question=it.question, answer=_answer(it, self.name).strip())
            for p in it.passages:
                text = f"{p.title}. {p.text}" if p.title else p.text
                for chunk in overlapping_chunks(text, max_words=self.chunk_words, overlap=self.overlap):
                    pairs.append((chunk, hypothesis))
                    owner.append(i)
        p = np.asarray(self.backend.predict(pairs), dtype=np.float64) if pairs else np.zeros(0)
        return max_by_owner(p, owner, len(items))


def greedy_answer(lm, prompt_ids: Sequence[int], *, max_new_tokens: int, one_line: bool, shown: bool = False) -> str:
    """The greedy answer: one line (short form: stop at the first newline) or free text; an
    answer ``shown`` to a user that reaches ``max_new_tokens`` on one line ends at its last
    sentence end (:func:`franq.lm.prompts.answer_end`)."""
    if one_line:
        s = lm.sample(list(prompt_ids), 1, max_new_tokens=max_new_tokens, stop_at_newline=True, greedy_first=True)
        cut = shown and s.samples[0].stop == "length"
        return answer_end(s.samples[0].text) if cut else s.samples[0].text
    return lm.generate(list(prompt_ids), max_new_tokens=max_new_tokens).text


DUAL_SCORES = ("perplexity", "percentile", "log_prob")


class DualGenerationCheck:
    """000's Dual Generation (section 4.1, after Wu et al. 2024): the answer with the
    passages and the closed-book answer without them, each scored by its length-normalized
    perplexity under its own prompt. ``score``: ``perplexity`` (000's decision function,
    the difference of the perplexities: closed-book minus RAG, higher = the passages made
    the model surer), ``percentile`` (the difference of each perplexity's percentile within
    its own set, the batch or ``reference``: Wu et al.'s calibrated comparison) or
    ``log_prob`` (the difference of mean token log-probabilities, franq's earlier reading;
    all three agree in sign with ``perplexity``). ``last`` keeps the
    :class:`~franq.apps.answering.paper_methods.DualScores` and ``picked`` the answer Dual
    Generation chooses (the RAG answer when its percentile is at least the closed book's).
    The closed-book answer is ``item.closed_answer`` or generated greedily (``closed_answers``)."""

    def __init__(self, lm, *, instruction: str | None = SHORT_INSTRUCTION, max_new_tokens: int = 16,
                 max_batch_tokens: int = 4096, score: str = "perplexity", reference: tuple | None = None,
                 answer_style: str = "franq"):
        if score not in DUAL_SCORES:
            raise InputError(f"dual score: expected one of {list(DUAL_SCORES)}, got {score!r}")
        self.lm = lm
        self.answer_style = answer_style
        """The answer prompt's wording (the pipeline's ``prompt_style``)."""
        self.instruction = instruction
        self.max_new_tokens = max_new_tokens
        self.max_batch_tokens = max_batch_tokens
        self.score, self.reference = score, reference
        self.name = f"dual:{lm.name}"
        self.closed_answers: list[str] = []
        self.picked: list[str] = []
        self.last = None

    def predict(self, items: Sequence[QAItem]) -> np.ndarray:
        lm, pairs = self.lm, []
        self.closed_answers = []
        one_line = self.instruction == SHORT_INSTRUCTION
        for it in items:
            answer = _answer(it, self.name)
            rag = lm.rag_prompt(it.question, it.passages, reserve=len(lm.encode(answer)), instruction=self.instruction,
                                style=self.answer_style)
            closed = lm.closed_book_prompt(it.question, instruction=self.instruction, style=self.answer_style)
            closed_answer = it.closed_answer if it.closed_answer is not None else greedy_answer(
                lm, closed.ids, max_new_tokens=self.max_new_tokens, one_line=one_line)
            self.closed_answers.append(closed_answer)
            pairs += [(rag.ids, lm.encode(answer)), (closed.ids, lm.encode(closed_answer) or [lm.pad_id])]
        lps = lm.continuation_logprobs(pairs, max_batch_tokens=self.max_batch_tokens) if pairs else []
        means = np.array([float(np.mean(lp)) if len(lp) else 0.0 for lp in lps], dtype=np.float64)
        if not len(items):
            return np.zeros(0, dtype=np.float64)
        d = self.last = dual_perplexity_scores(means[0::2], means[1::2], reference=self.reference)
        self.picked = [it.answer if pick else c for it, c, pick in zip(items, self.closed_answers, d.picks_rag)]
        if self.score == "log_prob":
            return means[0::2] - means[1::2]
        return d.difference if self.score == "perplexity" else d.pct_rag - d.pct_closed


class PTrueCheck:
    """FRANQ's answer-level P(true): the lowest P(true) over the answer's scored claims
    (calibrated when available, else raw); 0.5 when no claim was scored."""

    name = "p_true"

    def predict(self, items: Sequence[QAItem]) -> np.ndarray:
        out = []
        for it in items:
            if it.score is None:
                raise InputError("p_true: the item carries no FRANQ result (QAItem.score)")
            out.append(answer_p_true(it.score))
        return np.array(out, dtype=np.float64)


class SelfPTrueCheck:
    """Self-rated P(True) (Kadavath et al. 2022; 003's confidence signal): after the
    answer, the same chat continues with "Is your answer true?" and P(True) is read from
    the reply's first token (:data:`franq.lm.prompts.ANSWER_QUESTION`, the follow-up
    franq's benchmark uses). ``labeler``: a :class:`~franq.apps.answering.labelers.LocalLabeler`
    or :class:`~franq.apps.answering.labelers.OpenAILabeler`."""

    def __init__(self, labeler, *, instruction: str | None = SHORT_INSTRUCTION, prompt: str = "franq"):
        self.labeler = labeler
        self.instruction = instruction
        self.prompt = _style(prompt, "self_p_true")
        self.name = f"self_p_true:{labeler.name}"

    def predict(self, items: Sequence[QAItem]) -> np.ndarray:
        """``prompt="paper"``: 000 appendix E.3's P[True] prompt (correct / incorrect)."""
        if self.prompt == "paper":
            return self.labeler.probability([p_true_000_messages(it.question, [_passage(p) for p in it.passages],
                                                                 _answer(it, self.name)) for it in items],
                                            P_TRUE_000_LABELS)
        messages = [answer_messages(it.question, it.passages, instruction=self.instruction)
                    + [{"role": "assistant", "content": _answer(it, self.name)},
                       {"role": "user", "content": ANSWER_QUESTION}] for it in items]
        return self.labeler.probability(messages, P_TRUE_LABELS)


class OpenAIDualGeneration:
    """Dual generation on an OpenAI-compatible server (000 section 4.1, a unified method):
    the server answers with and without the passages (``logprobs=True``) and the score is
    the difference of the two answers' mean token log-probabilities. The server's RAG
    answers are kept in ``answers`` (it cannot score a given answer)."""

    def __init__(self, model: str, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 client=None, instruction: str | None = SHORT_INSTRUCTION, max_tokens: int = 32):
        self.client = client or openai_client(base_url, api_key_env=api_key_env, where=f"dual {model!r}")
        self.model = model
        self.instruction = instruction
        self.max_tokens = max_tokens
        self.name = f"dual:{server_name(model, base_url)}"
        self.answers: list[str] = []

    def _mean_logprob(self, messages) -> tuple[str, float]:
        try:
            resp = self.client.chat.completions.create(model=self.model, messages=messages, temperature=0,
                                                       max_tokens=self.max_tokens, logprobs=True)
        except Exception as exc:  # noqa: BLE001 - any client/server failure gets the same context
            raise FranqError(f"{self.name}: request failed: {exc}") from exc
        choice = resp.choices[0]
        content = getattr(getattr(choice, "logprobs", None), "content", None)
        if not content:
            raise FranqError(f"{self.name}: the server returned no log-probabilities (it must support logprobs)")
        return choice.message.content or "", float(np.mean([t.logprob for t in content]))

    def predict(self, items: Sequence[QAItem]) -> np.ndarray:
        out, self.answers = [], []
        for it in items:
            text, with_p = self._mean_logprob(answer_messages(it.question, it.passages, instruction=self.instruction))
            _, without = self._mean_logprob(answer_messages(it.question, None, instruction=self.instruction))
            self.answers.append(text)
            out.append(with_p - without)
        return np.array(out, dtype=np.float64)


def answer_p_true(score) -> float:
    values = [c.p_true_calibrated if c.p_true_calibrated is not None else c.p_true_raw for c in score.scored]
    values = [v for v in values if v is not None]
    return float(min(values)) if values else 0.5


def _style(prompt: str, who: str) -> str:
    if prompt not in PROMPT_STYLES:
        raise InputError(f"{who} prompt: expected one of {list(PROMPT_STYLES)}, got {prompt!r}")
    return prompt


def _passage(p) -> str:
    return f"{p.title}. {p.text}" if p.title else p.text


def _answer(item: QAItem, who: str) -> str:
    if not item.answer:
        raise InputError(f"{who}: the item has no answer to verify")
    return item.answer


# ---------------------------------------------------------------------------- fallbacks
class ClosedBookFallback:
    """The same model's greedy answer without the passages (000's No-RAG fallback)."""

    def __init__(self, lm, *, instruction: str | None = SHORT_INSTRUCTION, max_new_tokens: int = 16,
                 answer_style: str = "franq"):
        self.lm = lm
        self.instruction = instruction
        self.max_new_tokens = max_new_tokens
        self.answer_style = answer_style
        """The answer prompt's wording (the pipeline's ``prompt_style``)."""
        self.name = "closed_book"

    def answer(self, question: str, passages) -> str | None:
        prompt = self.lm.closed_book_prompt(question, instruction=self.instruction, style=self.answer_style)
        return greedy_answer(self.lm, prompt.ids, max_new_tokens=self.max_new_tokens,
                             one_line=self.instruction == SHORT_INSTRUCTION, shown=True)


class ModelFallback(ClosedBookFallback):
    """A second model (e.g. a larger one) answering with the passages (000 section 6.2.2)."""

    def __init__(self, lm, *, instruction: str | None = SHORT_INSTRUCTION, max_new_tokens: int = 16):
        super().__init__(lm, instruction=instruction, max_new_tokens=max_new_tokens)
        self.name = f"model:{lm.name}"

    def answer(self, question: str, passages) -> str | None:
        prompt = self.lm.rag_prompt(question, passages, reserve=self.max_new_tokens, instruction=self.instruction)
        return greedy_answer(self.lm, prompt.ids, max_new_tokens=self.max_new_tokens,
                             one_line=self.instruction == SHORT_INSTRUCTION, shown=True)


class AbstainFallback:
    """No answer (selective generation's abstention)."""

    name = "abstain"

    def answer(self, question: str, passages) -> str | None:
        return None
