"""FRANQ short-form mode (paper section 2.2, short-form QA): the whole answer is one claim.

    P_faithful   = faithfulness(question + " " + answer, passages)
    UQ_faith     = exp(-semantic entropy)        of N samples drawn *with* the passages
    UQ_unfaith   = 1 / sum of Laplacian eigvals  of N samples drawn with the passages
                   (paper), or without them (``unfaith_samples="closed"``, our option)
    P(true)      = P_faithful * UQ_faith + (1 - P_faithful) * UQ_unfaith

Semantic entropy and the eigenvalue sum are uncertainties, not probabilities; the maps
``exp(-SE)`` and ``1 / U_eigval`` (both "one over the effective number of meanings", see
:mod:`franq.scorers.semantic_entropy` and :mod:`franq.scorers.eigval`) bring them to
[0, 1], higher = more likely true, for the uncalibrated mix. Calibration (isotonic, paper
section 2.3) can be fitted on the raw values kept in ``components``.

Samples come from the same prompts as the long-form passes, so an existing answer is
scored by sampling the model's own answers to its question.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from claims.decompose import split_sentences
from claims.types import Claim
from franq.config import MODES, UNFAITH_SAMPLES
from franq.errors import InputError
from franq.io import Example
from franq.lm.prompts import SHORT_INSTRUCTION
from franq.lm.sampling import SampleSet
from franq.mix import mix
from franq.scorers.degree_matrix import DegreeMatrixScorer
from franq.scorers.eccentricity import EccentricityScorer
from franq.scorers.eigval import SumEigenvaluesScorer
from franq.scorers.lexical_similarity import LexicalSimilarityScorer
from franq.scorers.samples import SampleContext, semantic_classes
from franq.scorers.semantic_entropy import SemanticEntropyScorer
from franq.types import AnswerScore, ClaimScore

log = logging.getLogger(__name__)

SHORT_MAX_WORDS = 15


def is_short_answer(answer: str) -> bool:
    """``mode="auto"``: one sentence of at most 15 words, on one line, is short-form."""
    text = answer.strip()
    if not text or "\n" in text or len(text.split()) > SHORT_MAX_WORDS:
        return False
    return len(split_sentences(text)) <= 1


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise InputError(f"mode: expected one of {list(MODES)}, got {mode!r}")
    return mode


@dataclass(frozen=True)
class SamplingOptions:
    """How short-form samples are drawn (Kuhn et al. 2023 use N = 10 at temperature 1)."""

    n_samples: int = 10
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    max_new_tokens: int = 32
    seed: int = 0
    unfaith_samples: str = "rag"

    def __post_init__(self):
        if self.unfaith_samples not in UNFAITH_SAMPLES:
            raise ValueError(f"unfaith_samples: expected one of {list(UNFAITH_SAMPLES)}, "
                             f"got {self.unfaith_samples!r}")
        if not isinstance(self.n_samples, int) or self.n_samples < 2:
            raise ValueError(f"n_samples: expected an integer >= 2, got {self.n_samples!r}")

    def draw(self, lm, prompt_ids, *, seed_offset: int = 0, greedy_first: bool = False, prefill=None) -> SampleSet:
        """``n_samples`` answers to ``prompt_ids`` with these options (plus the greedy one as
        row 0 with ``greedy_first``); ``prefill`` as in :meth:`franq.sampling.Sampler.sample`."""
        return lm.sample(prompt_ids, self.n_samples + (1 if greedy_first else 0), temperature=self.temperature,
                         top_p=self.top_p, top_k=self.top_k, max_new_tokens=self.max_new_tokens,
                         stop_at_newline=True, seed=self.seed + seed_offset, greedy_first=greedy_first,
                         prefill=prefill)


def short_rag_prompt(lm, question: str, passages, *, options: SamplingOptions, on_overflow: str = "truncate"):
    """The short-form prompt with the passages, leaving room for ``options.max_new_tokens``."""
    return lm.rag_prompt(question, passages, reserve=options.max_new_tokens, on_overflow=on_overflow,
                         instruction=SHORT_INSTRUCTION)


class ShortForm:
    """Scores short answers as single claims from samples; see the module docstring."""

    def __init__(self, lm, faithfulness, judge, *, options: SamplingOptions | None = None,
                 on_overflow: str = "truncate"):
        self.lm = lm
        self.faithfulness = faithfulness
        self.judge = judge
        self.options = options or SamplingOptions()
        self.on_overflow = on_overflow
        self.uq_faith = SemanticEntropyScorer()
        self.uq_unfaith = SumEigenvaluesScorer()
        self.extra = (DegreeMatrixScorer(), EccentricityScorer(), LexicalSimilarityScorer())

    def _samples(self, prompt_ids, seed_offset: int = 0, *, greedy_first: bool = False):
        """``n_samples`` answers (plus the greedy one as row 0 with ``greedy_first``)."""
        return self.options.draw(self.lm, prompt_ids, seed_offset=seed_offset, greedy_first=greedy_first)

    def _rag_prompt(self, question: str, passages):
        return short_rag_prompt(self.lm, question, passages, options=self.options, on_overflow=self.on_overflow)

    def context(self, question: str, samples) -> SampleContext:
        texts = samples.texts
        return SampleContext(texts, samples.logprobs, self.judge.entailment(question, texts))

    def greedy_answer(self, question: str, passages) -> tuple[str, tuple[str, ...], SampleSet]:
        """The greedy one-line answer, the prompt's warnings, and the N samples with the
        passages, all from one prefill (the greedy answer is row 0 of the same batch)."""
        prompt = self._rag_prompt(question, passages)
        s = self._samples(prompt.ids, greedy_first=True)
        return s.samples[0].text, prompt.warnings, SampleSet(s.samples[1:], s.prompt_tokens)

    def score_many(self, examples: Sequence[Example], contexts: Sequence[str], *,
                   rag_samples: Sequence[SampleSet] | None = None) -> list[AnswerScore]:
        """``contexts[i]`` is the faithfulness context (joined passages) of ``examples[i]``;
        ``rag_samples[i]``, when given, are its samples with the passages (else drawn here)."""
        o = self.options
        faith_ctx, unfaith_ctx, warnings = [], [], []
        for k, ex in enumerate(examples):
            if rag_samples is None:
                prompt = self._rag_prompt(ex.question, ex.passages)
                warnings.append(prompt.warnings)
                samples = self._samples(prompt.ids)
            else:
                warnings.append(())
                samples = rag_samples[k]
            rag = self.context(ex.question, samples)
            faith_ctx.append(rag)
            if o.unfaith_samples == "closed":
                closed_prompt = self.lm.closed_book_prompt(ex.question, instruction=SHORT_INSTRUCTION)
                closed = self._samples(closed_prompt.ids, seed_offset=1)
                unfaith_ctx.append(self.context(ex.question, closed))
            else:
                unfaith_ctx.append(rag)
        u_faith = self.uq_faith.uncertainty(faith_ctx)
        u_unfaith = self.uq_unfaith.uncertainty(unfaith_ctx)
        p_faith = self.uq_faith.from_uncertainty(u_faith)
        p_unfaith = self.uq_unfaith.from_uncertainty(u_unfaith)
        pairs = [(ctx, f"{ex.question} {ex.answer.strip()}") for ex, ctx in zip(examples, contexts)]
        p_f = np.clip(np.asarray(self.faithfulness.predict(pairs), dtype=np.float64), 0.0, 1.0)
        p_true = mix(p_f, p_faith, p_unfaith)
        extra = {s.name: s.uncertainty(faith_ctx) for s in self.extra}
        out = []
        for k, ex in enumerate(examples):
            components = {
                f"u_{self.uq_faith.name}": float(u_faith[k]), self.uq_faith.name: float(p_faith[k]),
                f"u_{self.uq_unfaith.name}": float(u_unfaith[k]), self.uq_unfaith.name: float(p_unfaith[k]),
                "n_semantic_classes": float(len(semantic_classes(faith_ctx[k].equivalent))),
                "n_samples": float(o.n_samples),
            }
            components.update({f"u_{name}": float(v[k]) for name, v in extra.items()})
            claim = whole_answer_claim(ex.answer)
            out.append(AnswerScore(
                question=ex.question, answer=ex.answer,
                claims=(ClaimScore(claim, "scored", p_faithful=float(p_f[k]), p_true_if_faithful=float(p_faith[k]),
                                   p_true_if_unfaithful=float(p_unfaith[k]), p_true=float(p_true[k]),
                                   components=components),),
                mode="short", model=self.lm.name, faithfulness=self.faithfulness.name,
                warnings=tuple(warnings[k])))
        return out


def whole_answer_claim(answer: str) -> Claim:
    """The answer as one claim (paper: "we treat each model response as a single claim")."""
    stripped = answer.strip()
    start = answer.find(stripped) if stripped else 0
    return Claim(stripped, ((start, start + len(stripped)),), sentence=0)
