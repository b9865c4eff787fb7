"""Franq: owns the loaded components and runs the stages in order:

    decompose -> align -> token log-probs (with / without passages) -> scorers
    -> faithfulness -> mix

Forward passes and faithfulness calls are batched across all answers of a call to
:meth:`Franq.score_many`.
"""
from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from claims.align import align_claims, answer_units, locate_claim
from claims.decompose import Decomposer, SentenceDecomposer, decompose_all
from claims.types import Claim, Decomposition
from franq.calibrate import resolve_calibrator, stack_key
from franq.config import FranqConfig
from franq.faithfulness.base import FaithfulnessBackend, predict_faithfulness
from franq.faithfulness.factory import backend_from_config
from franq.faithfulness.lexical import LexicalFaithfulness
from franq.io import Example, parse_claims, parse_passages, parse_text
from franq.lm import AnswerPass, CausalLM, Generation
from franq.lm.prompts import passages_context
from franq.mix import mix
from franq.scorers.base import ClaimContext
from franq.scorers.claim_prob import MaxClaimProbabilityScorer
from franq.scorers.parametric import ParametricKnowledgeScorer
from franq.types import AnswerScore, ClaimScore, Passage

log = logging.getLogger(__name__)


@dataclass
class _Work:
    """One answer on its way through the stages."""

    example: Example
    claims: list[Claim]
    answer_ids: list[int]
    rag_ids: tuple[int, ...] | None
    closed_ids: tuple[int, ...]
    rag_logprobs: np.ndarray | None = None
    closed_logprobs: np.ndarray | None = None
    warnings: list[str] = field(default_factory=list)


class Franq:
    """FRANQ long-form scoring (paper section 2).

    ``uq_faith`` defaults to Max Claim Probability p(c|x,r) and ``uq_unfaith`` to
    Parametric Knowledge p(c|x); ``faithfulness`` to the lexical backend. The result for
    each claim is ``P(true) = P_f * UQ_faith + (1 - P_f) * UQ_unfaith`` (uncalibrated).
    """

    def __init__(self, lm: CausalLM, *, decomposer: Decomposer | None = None,
                 faithfulness: FaithfulnessBackend | None = None,
                 on_overflow: str = "truncate", max_batch_tokens: int = 4096,
                 max_new_tokens: int = 256, calibrator: str | None = None,
                 calibrator_mismatch: str = "warn", judge=None, sampling=None,
                 mode: str = "long"):
        self.lm = lm
        self.decomposer = decomposer or SentenceDecomposer()
        self.faithfulness = faithfulness or LexicalFaithfulness()
        self.uq_faith = MaxClaimProbabilityScorer()
        self.uq_unfaith = ParametricKnowledgeScorer()
        self.on_overflow = on_overflow
        self.max_batch_tokens = max_batch_tokens
        self.max_new_tokens = max_new_tokens
        self.stack = stack_key(model=self.lm.name, faithfulness=self.faithfulness.name,
                               uq_faith=self.uq_faith.name, uq_unfaith=self.uq_unfaith.name, mode="long")
        self.calibrator, self.calibration_warnings = resolve_calibrator(
            calibrator, self.stack, on_mismatch=calibrator_mismatch)
        self.judge = judge  # short-form equivalence judge; None = NormalizedAnswerJudge
        self.sampling = sampling  # short-form SamplingOptions; None = defaults
        self.mode = mode  # default mode of score / score_many / answer
        self._short = None

    @classmethod
    def from_config(cls, config: FranqConfig | None = None) -> Franq:
        config = config or FranqConfig()
        lm = CausalLM.load(config.model, gguf_file=config.gguf_file, device=config.device, dtype=config.dtype)
        from franq.decomposers import build_decomposer

        return cls(lm, decomposer=build_decomposer(config, lm), faithfulness=backend_from_config(config, lm),
                   on_overflow=config.on_overflow, max_batch_tokens=config.max_batch_tokens,
                   max_new_tokens=config.max_new_tokens, calibrator=config.calibrator,
                   calibrator_mismatch=config.calibrator_mismatch,
                   judge=_config_judge(config, lm), sampling=_config_sampling(config), mode=config.mode)

    # ------------------------------------------------------------------ public API
    def score(self, question: str, passages: Sequence[str | dict | Passage], answer: str, *,
              claims: Sequence[str] | None = None, mode: str | None = None) -> AnswerScore:
        """Score an existing answer, claim by claim. ``claims`` (optional) gives the claims
        as text instead of decomposing the answer; each is located in the answer.
        ``mode``: "long" (claims, token probabilities), "short" (the whole answer is one
        claim, scored from samples: :mod:`franq.short`) or "auto" (a single short
        sentence is short-form); default ``self.mode``."""
        given = parse_claims(claims)
        example = Example(parse_text(question, "question"), parse_passages(passages),
                          parse_text(answer, "answer"), claims=given[0] if given else None)
        return self.score_many([example], mode=mode)[0]

    def score_many(self, examples: Iterable[Example], *, mode: str | None = None) -> list[AnswerScore]:
        """Score validated examples together, batching forward passes across them."""
        examples = list(examples)
        short = self._short_flags(examples, mode)
        if any(short):
            return self._score_mixed(examples, short)
        decs = iter(decompose_all(self.decomposer, [ex.answer for ex in examples if ex.claims is None]))
        work = [self._prepare(ex, decomposition=next(decs) if ex.claims is None else None) for ex in examples]
        return self._finish(work)

    def score_observed(self, example: Example) -> tuple[AnswerScore, AnswerPass]:
        """Score one long-form answer as :meth:`score_many` does, and also return the
        with-passages pass (its KV cache and token entropies) for evaluation baselines that
        ask follow-up questions about the answer (:mod:`franq.evaluation.observe`)."""
        decomposition = decompose_all(self.decomposer, [example.answer])[0] if example.claims is None else None
        w = self._prepare(example, decomposition=decomposition)
        rag_pass = self.lm.answer_pass(w.rag_ids, w.answer_ids)
        w.rag_logprobs = rag_pass.token_logprobs
        return self._finish([w])[0], rag_pass

    def _short_flags(self, examples: list[Example], mode: str | None) -> list[bool]:
        from franq.short import check_mode, is_short_answer

        mode = check_mode(mode or self.mode)
        if mode == "auto":
            return [ex.claims is None and is_short_answer(ex.answer) for ex in examples]
        return [mode == "short"] * len(examples)

    def _score_mixed(self, examples: list[Example], short: list[bool]) -> list[AnswerScore]:
        long_ex = [ex for ex, s in zip(examples, short) if not s]
        short_ex = [ex for ex, s in zip(examples, short) if s]
        long_res = iter(self._finish([self._prepare(ex) for ex in long_ex]) if long_ex else [])
        short_res = iter(self.short_form().score_many(short_ex, [passages_context(ex.passages) for ex in short_ex]))
        return [next(short_res) if s else next(long_res) for s in short]

    def short_form(self):
        """The short-form scorer (:class:`franq.short.ShortForm`), built on first use."""
        if self._short is None:
            from franq.judges.normalized import NormalizedAnswerJudge
            from franq.short import ShortForm

            self._short = ShortForm(self.lm, self.faithfulness, self.judge or NormalizedAnswerJudge(),
                                    options=self.sampling, on_overflow=self.on_overflow)
        return self._short

    def answer(self, question: str, passages: Sequence[str | dict | Passage], *,
               max_new_tokens: int | None = None, mode: str | None = None) -> AnswerScore:
        """Generate a greedy answer with the passages and score it. The generation's own
        log-probabilities serve as p(c|x,r): only the closed-book pass is run again.
        ``mode="short"`` generates a one-line answer and scores it from samples; "auto"
        generates as long-form and scores a single short sentence as short-form."""
        question = parse_text(question, "question")
        passages = parse_passages(passages)
        from franq.short import check_mode, is_short_answer

        mode = check_mode(mode or self.mode)
        if mode == "short":
            text, warnings, samples = self.short_form().greedy_answer(question, passages)
            if not text:
                raise ValueError("the model generated an empty answer")
            result = self.short_form().score_many([Example(question, passages, text)], [passages_context(passages)],
                                                  rag_samples=[samples])[0]
            return dataclasses.replace(result, warnings=tuple(warnings) + result.warnings)
        n = max_new_tokens or self.max_new_tokens
        prompt = self.lm.rag_prompt(question, passages, reserve=n, on_overflow=self.on_overflow)
        gen = self.lm.generate(prompt.ids, max_new_tokens=n)
        if not gen.token_ids:
            raise ValueError("the model generated an empty answer")
        example = Example(question, passages, gen.text)
        if mode == "auto" and is_short_answer(gen.text):
            return self.score_many([example], mode="short")[0]
        w = self._prepare(example, generation=gen)
        w.warnings[:0] = prompt.warnings
        return self._finish([w])[0]

    # ------------------------------------------------------------------ stages
    def _prepare(self, ex: Example, generation: Generation | None = None,
                 decomposition: Decomposition | None = None) -> _Work:
        if generation is None:
            answer_ids, offsets = self.lm.encode_answer(ex.answer)
        else:
            answer_ids, offsets = list(generation.token_ids), list(generation.offsets)
        decomp_warnings: tuple[str, ...] = ()
        if ex.claims is None:
            decomposition = decomposition or decompose_all(self.decomposer, [ex.answer])[0]
            claims, decomp_warnings = list(decomposition.claims), decomposition.warnings
        else:
            units = answer_units(ex.answer)  # split once, not once per claim
            claims = [locate_claim(ex.answer, c, sentence=i, units=units) for i, c in enumerate(ex.claims)]
        claims = align_claims(ex.answer, claims, offsets, answer_ids)
        closed = self.lm.closed_book_prompt(ex.question)
        if generation is None:
            rag = self.lm.rag_prompt(ex.question, ex.passages, reserve=len(answer_ids),
                                     on_overflow=self.on_overflow)
            return _Work(ex, claims, answer_ids, rag.ids, closed.ids,
                         warnings=list(rag.warnings) + list(decomp_warnings))
        return _Work(ex, claims, answer_ids, None, closed.ids, warnings=list(decomp_warnings),
                     rag_logprobs=np.asarray(generation.token_logprobs, dtype=np.float64))

    def _finish(self, work: list[_Work]) -> list[AnswerScore]:
        self._forward(work)
        contexts: list[ClaimContext] = []
        pairs: list[tuple[str, str]] = []
        for w in work:
            ctx = passages_context(w.example.passages)
            for c in w.claims:
                if c.check_worthy and c.is_aligned:
                    contexts.append(ClaimContext(c, w.rag_logprobs, w.closed_logprobs))
                    pairs.append((ctx, c.text))
        if contexts:
            log_faith = self.uq_faith.log_score(contexts)
            log_unfaith = self.uq_unfaith.log_score(contexts)
            p_faith, p_unfaith = np.exp(log_faith), np.exp(log_unfaith)
            p_f = predict_faithfulness(self.faithfulness, pairs, contexts)
            p_true = mix(p_f, p_faith, p_unfaith)
            components = {  # raw scorer values, by name; kept in every ClaimScore
                self.uq_faith.name: p_faith, f"log_{self.uq_faith.name}": log_faith,
                self.uq_unfaith.name: p_unfaith, f"log_{self.uq_unfaith.name}": log_unfaith,
                "n_tokens": np.array([len(x.claim.token_positions) for x in contexts], dtype=np.float64)}
            if self.calibrator is not None:
                components |= {"p_faithful_raw": p_f, "p_true_raw": p_true}
                p_f, p_faith, p_unfaith, p_true = self.calibrator.apply(p_f, p_faith, p_unfaith, components)
        scored = iter(range(len(contexts)))
        results = []
        for w in work:
            out = []
            for c in w.claims:
                if not c.check_worthy:
                    out.append(ClaimScore(c, "not_check_worthy"))
                elif not c.is_aligned:
                    out.append(ClaimScore(c, "unaligned"))
                else:
                    k = next(scored)
                    out.append(ClaimScore(
                        c, "scored", p_faithful=float(p_f[k]), p_true_if_faithful=float(p_faith[k]),
                        p_true_if_unfaithful=float(p_unfaith[k]), p_true=float(p_true[k]),
                        components={name: float(values[k]) for name, values in components.items()}))
            results.append(AnswerScore(
                question=w.example.question, answer=w.example.answer, claims=tuple(out), mode="long",
                model=self.lm.name, faithfulness=self.faithfulness.name,
                calibration=self.calibrator.name if self.calibrator is not None else "none",
                warnings=(*w.warnings, *self.calibration_warnings)))
        return results

    def _forward(self, work: list[_Work]) -> None:
        """All with-passage and closed-book passes of all answers in one batched call."""
        items, slots = [], []
        for w in work:
            if w.rag_logprobs is None:
                items.append((w.rag_ids, w.answer_ids))
                slots.append((w, "rag_logprobs"))
            items.append((w.closed_ids, w.answer_ids))
            slots.append((w, "closed_logprobs"))
        for (w, attr), lp in zip(slots, self.lm.continuation_logprobs(items, max_batch_tokens=self.max_batch_tokens)):
            setattr(w, attr, lp)


@functools.lru_cache(maxsize=1)
def default_franq() -> Franq:
    """The embedded default pipeline, loaded on first use and reused."""
    return Franq.from_config(FranqConfig())


def score(question: str, passages: Sequence[str | dict | Passage], answer: str, *,
          claims: Sequence[str] | None = None, mode: str | None = None) -> AnswerScore:
    """Score ``answer`` to ``question`` given the retrieved ``passages`` with the default
    (embedded) pipeline. See :meth:`Franq.score`."""
    return default_franq().score(question, passages, answer, claims=claims, mode=mode)


def _config_judge(config: FranqConfig, lm: CausalLM):
    """The short-form equivalence judge named by ``config.judge``."""
    if config.judge == "lm":
        from franq.judges.lm_judge import LMJudge

        return LMJudge(lm)
    return None  # "normalized": the default NormalizedAnswerJudge


def _config_sampling(config: FranqConfig):
    from franq.short import SamplingOptions

    return SamplingOptions(n_samples=config.n_samples, unfaith_samples=config.unfaith_samples)
