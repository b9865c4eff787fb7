"""The ``samples`` evidence (short form): N answers sampled for the question, their
likelihoods, and a pairwise entailment matrix from an equivalence judge
(:mod:`franq.equivalence`), as :class:`~franq.scorers.diversity.SampleContext` objects.

Samples are drawn with the passages, from the same short-form prompt the answer would be
generated with (the paper's setting for both UQ_faith and UQ_unfaith); with
``unfaith_samples="closed"`` a second set is drawn without the passages for UQ_unfaith.
Kuhn et al. (2023) use N = 10 at temperature 1.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from franq.config_checks import UNFAITH_SAMPLES
from franq.errors import ContextOverflowError
from franq.lm.prompts import SHORT_ANSWER_TOKENS, SHORT_INSTRUCTION, answer_end
from franq.scorers.diversity import SampleContext


@dataclass(frozen=True)
class SamplingOptions:
    """How short-form samples are drawn."""

    n_samples: int = 10
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    max_new_tokens: int = 16
    seed: int = 0
    unfaith_samples: str = "rag"

    def __post_init__(self):
        if self.unfaith_samples not in UNFAITH_SAMPLES:
            raise ValueError(f"unfaith_samples: expected one of {list(UNFAITH_SAMPLES)}, "
                             f"got {self.unfaith_samples!r}")
        if not isinstance(self.n_samples, int) or self.n_samples < 2:
            raise ValueError(f"n_samples: expected an integer >= 2, got {self.n_samples!r}")

    @classmethod
    def from_config(cls, uq) -> SamplingOptions:
        return cls(n_samples=uq.n_samples, temperature=uq.temperature, max_new_tokens=uq.max_sample_tokens,
                   seed=uq.seed, unfaith_samples=uq.unfaith_samples)

    def draw(self, lm, prompt_ids, *, seed_offset: int = 0, greedy_first: bool = False, prefill=None,
             n: int | None = None):
        """``n`` (default ``n_samples``) answers to ``prompt_ids`` with these options (plus the
        greedy one as row 0 with ``greedy_first``); ``prefill`` as in
        :meth:`franq.lm.sampling.Sampler.sample`."""
        n = self.n_samples if n is None else n
        return lm.sample(prompt_ids, n + (1 if greedy_first else 0), temperature=self.temperature,
                         top_p=self.top_p, top_k=self.top_k, max_new_tokens=self.max_new_tokens,
                         stop_at_newline=True, seed=self.seed + seed_offset, greedy_first=greedy_first,
                         prefill=prefill)


def short_rag_prompt(lm, question: str, passages, *, options: SamplingOptions, on_overflow: str = "truncate",
                     style: str = "franq"):
    """The short-form prompt with the passages, leaving room for ``options.max_new_tokens``
    (``style``: the answer prompt's wording, :meth:`franq.lm.CausalLM.render`)."""
    return lm.rag_prompt(question, passages, reserve=options.max_new_tokens, on_overflow=on_overflow,
                         instruction=SHORT_INSTRUCTION, style=style)


def greedy_short_answer(lm, question: str, passages, *, options: SamplingOptions, on_overflow: str = "truncate",
                        style: str = "franq", max_new_tokens: int | None = None):
    """The greedy one-line answer to the short-form prompt, without drawing samples, and the
    prompt's warnings: up to its end of line within ``max_new_tokens`` (default: the larger of
    :data:`SHORT_ANSWER_TOKENS` and the samples' budget); an answer that reaches the budget
    is cut at its last sentence end (:func:`franq.lm.prompts.answer_end`) and a warning says so."""
    budget = max_new_tokens or max(SHORT_ANSWER_TOKENS, options.max_new_tokens)
    options = replace(options, max_new_tokens=budget)
    prompt = short_rag_prompt(lm, question, passages, options=options, on_overflow=on_overflow, style=style)
    greedy = options.draw(lm, prompt.ids, greedy_first=True, n=0).samples[0]
    warnings = list(prompt.warnings)
    if greedy.stop != "length":
        return greedy.text, warnings
    text = answer_end(greedy.text)
    warnings.append(f"the short answer reached its {budget}-token budget"
                    + (" and was cut at its last sentence end" if text != greedy.text else " and may be cut")
                    + "; --max-new-tokens sets the budget")
    return text, warnings


class SampleDraws:
    name = "samples"

    def __init__(self, lm, judge, *, options: SamplingOptions | None = None, on_overflow: str = "truncate",
                 with_answer: bool = False, max_batch_tokens: int = 4096, style: str = "franq"):
        self.lm = lm
        self.style = style
        """The answer prompt's wording (:meth:`franq.lm.CausalLM.render`)."""
        self.judge = judge
        self.options = options or SamplingOptions()
        self.on_overflow = on_overflow
        self.with_answer = with_answer
        """Also judge each sample against the scored answer and teacher-force the answer
        (the ``answer_samples`` evidence)."""
        self.max_batch_tokens = max_batch_tokens

    def context(self, question: str, sample_set, answer: str | None = None, answer_logprobs=None,
                answer_closed_logprobs=None) -> SampleContext:
        """Samples -> what a sample scorer reads (texts, likelihoods, token counts, the
        judge's entailment); with ``answer``, also the entailment between it and each sample
        (one judge call over the samples and the answer together) and, when given, the
        answer's own token log-probabilities with and without the passages."""
        texts = tuple(sample_set.texts)
        lengths = getattr(sample_set, "lengths", None)
        relation = getattr(self.judge, "relation", None)  # a judge that decides entailment itself (NLI argmax)
        if answer is None:
            m, d = relation(question, texts) if relation else (self.judge.entailment(question, texts), None)
            return SampleContext(texts, sample_set.logprobs, m, lengths, entails=d)
        n = len(texts)
        both = texts + (answer,)
        m, d = relation(question, both) if relation else (self.judge.entailment(question, both), None)
        m = np.asarray(m, dtype=np.float64)
        return SampleContext(texts, sample_set.logprobs, m[:n, :n], lengths, np.stack([m[n, :n], m[:n, n]]),
                             answer_logprobs, answer_closed_logprobs, answer,
                             entails=None if d is None else d[:n, :n],
                             answer_entails=None if d is None else np.stack([d[n, :n], d[:n, n]]))

    def greedy_answer(self, question: str, passages, *, max_new_tokens: int | None = None):
        """The greedy one-line answer, the prompt's warnings and the N samples with the
        passages, all from one prefill (the greedy answer is row 0 of the same batch). The
        samples keep their token budget; a greedy answer that reaches it is generated again
        to its end of line as :func:`greedy_short_answer` does (one more prefill, only then)."""
        from franq.lm.sampling import SampleSet

        prompt = short_rag_prompt(self.lm, question, passages, options=self.options, on_overflow=self.on_overflow,
                                  style=self.style)
        s = self.options.draw(self.lm, prompt.ids, greedy_first=True)
        text, warnings = s.samples[0].text, prompt.warnings
        budget = max_new_tokens or SHORT_ANSWER_TOKENS
        if budget < self.options.max_new_tokens or (s.samples[0].stop == "length"
                                                    and budget > self.options.max_new_tokens):
            try:
                text, warnings = greedy_short_answer(self.lm, question, passages, options=self.options,
                                                     on_overflow=self.on_overflow, style=self.style,
                                                     max_new_tokens=max_new_tokens)
            except ContextOverflowError:  # no room for a longer answer (on_overflow "error"): the samples' one
                full = f"the short answer stopped at the samples' {self.options.max_new_tokens} tokens: the context has no room"
                warnings = [*warnings, full]
        return text, warnings, SampleSet(s.samples[1:], s.prompt_tokens)

    def gather(self, answers: Sequence) -> None:
        """Fill ``samples`` (and ``closed_samples`` with ``unfaith_samples="closed"``) of each
        answer; answers that already carry their sample set (a generated answer, cached
        samples) are not sampled again. Answers to the same question and passages share one
        prompt prefill and one sample set. With ``with_answer`` (observer), each answer is
        also teacher-forced after the prompt with and without the passages, from the same
        prefills, so that costs only the answer's own tokens."""
        groups: dict[tuple, list] = {}
        for a in answers:
            groups.setdefault((a.example.question, tuple(a.example.passages)), []).append(a)
        for (question, passages), group in groups.items():
            self._gather_group(question, passages, group)

    def _gather_group(self, question: str, passages, group: list) -> None:
        o, lm = self.options, self.lm
        texts = [a.example.answer.strip() for a in group]
        ids = [lm.encode_answer(t)[0] for t in texts] if self.with_answer else []
        rag = closed = [None] * len(group)
        missing = [a for a in group if a.sample_set is None]
        if missing or self.with_answer:
            prompt = lm.rag_prompt(question, passages, reserve=max([o.max_new_tokens, *map(len, ids)]),
                                   on_overflow=self.on_overflow, instruction=SHORT_INSTRUCTION, style=self.style)
            for a in group:
                a.warnings.extend(prompt.warnings)
            pre = lm.prefill(prompt.ids)
            if self.with_answer:
                rag = lm.continuation_logprobs_after(pre, ids)  # before sampling, which consumes the cache
            if missing:
                drawn = o.draw(lm, prompt.ids, prefill=pre)
                for a in missing:
                    a.sample_set = drawn
        closed_prompt = closed_pre = None
        if self.with_answer or o.unfaith_samples == "closed":
            closed_prompt = lm.closed_book_prompt(question, instruction=SHORT_INSTRUCTION, style=self.style)
            closed_pre = lm.prefill(closed_prompt.ids)
            if self.with_answer:
                closed = lm.continuation_logprobs_after(closed_pre, ids)
        extra = [(t, r, c) if self.with_answer else () for t, r, c in zip(texts, rag, closed)]
        for a, more in zip(group, extra):
            a.samples = self.context(question, a.sample_set, *more)
        if o.unfaith_samples == "closed":
            drawn = o.draw(lm, closed_prompt.ids, seed_offset=1, prefill=closed_pre)
            for a, more in zip(group, extra):
                a.closed_samples = self.context(question, drawn, *more)
