"""Franq: owns the loaded models and runs the stages (:mod:`franq.stages`, one module each)
in this order for every answer::

    claims        decomposer + aligner (long) | the whole answer (short)
    evidence      passes (teacher forcing with / without passages) | samples
    uq            UQ_faith: p(c|x,r) (long) | semantic entropy (short); UQ_unfaith: p(c|x) | sum of
                  eigenvalues; extra scorers, whose signals are kept in the results
    faithfulness  P(claim supported by its passages)
    mix           P(true) = P_f * UQ_faith + (1 - P_f) * UQ_unfaith (uncalibrated)
    calibrate     isotonic maps fitted on labelled claims (none / calibrated / condition / soft)
    result        an AnswerScore, one ClaimScore per claim

One :class:`~franq.stages.record.AnswerRecord` per answer carries the example (its
passages as given) through the stages. Long and short form are two presets of this one
class (:mod:`franq.presets`); every component is chosen by name in
:class:`~franq.config.FranqConfig` and built through :mod:`franq.registry` when the pipeline
is built. Forward passes and faithfulness calls are batched across all answers of a
:meth:`Franq.score_many` call.
"""
from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Iterable, Sequence

import numpy as np

from franq import registry
from franq.config import FranqConfig
from franq.errors import InputError
from franq.evidence import SAMPLES
from franq.evidence.passes import TokenPasses
from franq.evidence.samples import SamplingOptions, greedy_short_answer
from franq.io import Example, as_examples, parse_claims, parse_passages, parse_text
from franq.limits import check, check_example, check_inputs, use_limits
from franq.lm.capture import CaptureSpec
from franq.presets import (PRESETS, check_config, check_preset, check_text_only, is_short_answer, loads_lm,
                           presets_for, short_preset)
from franq.stages.calibrate import calibrate
from franq.stages.claims import find_claims, scorable
from franq.stages.evidence import gather
from franq.stages.faithfulness import judge_faithfulness
from franq.stages.mix import mix_batch
from franq.stages.preset import PresetPipeline, build_preset
from franq.stages.record import AnswerRecord, ClaimEvidence
from franq.stages.result import answer_scores
from franq.stages.uq import score_uq
from franq.types import AnswerScore, Passage

log = logging.getLogger(__name__)


class Franq:
    """FRANQ (paper section 2): claim-level P(true) of RAG answers.

    Build with :meth:`from_config`; ``score`` / ``score_many`` score existing answers,
    ``answer`` generates one and scores it. ``components`` lists what runs, by stage.
    """

    on_stage = None
    """Called with each stage's name as it starts (:data:`STAGES`; a command's progress on
    stderr), or None. It is told, never waited on: the stages run as they would without it."""

    def __init__(self, config: FranqConfig, lm, *, decomposer=None, faithfulness=None, equivalence=None):
        check_config(config)
        self._build(config, lm, decomposer=decomposer, faithfulness=faithfulness, equivalence=equivalence)

    def _build(self, config: FranqConfig, lm, *, decomposer=None, faithfulness=None, equivalence=None) -> None:
        """Resolve the components by name (:mod:`franq.registry`) and build each preset of the mode."""
        self.config = config
        self.lm = lm
        self.prompt_style = config.prompts.of("answer")
        """The answer prompt's wording (``[prompts] answer``), passed to every prompt this pipeline builds."""
        self.decomposer = decomposer if decomposer is not None else registry.build(
            "decomposers", config.decomposer.name, config, lm)
        self.faithfulness = faithfulness if faithfulness is not None else registry.build(
            "faithfulness", config.faithfulness.name, config, lm)
        self._equivalence = equivalence
        self._presets: dict[str, PresetPipeline] = {}
        for preset in presets_for(config.mode, config):
            self.preset(preset.name)  # build (and resolve the calibrator) up front: errors surface now

    @classmethod
    def from_config(cls, config: FranqConfig | None = None) -> Franq:
        from franq.lm import load_lm
        from franq.lm.threads import configure_threads

        config = config or FranqConfig()
        check_config(config)  # before the model loads
        use_limits(config.limits)  # calibrators, probes, cards: read under this config's limits
        configure_threads(config=config.model.threads, limits=config.limits)
        franq = cls.__new__(cls)
        if not loads_lm(config.mode, config):  # fast, chat: no causal LM is loaded at all
            check_text_only(config)
            franq._build(config, None)
            return franq
        teacher_forces = any(p.teacher_forces for p in presets_for(config.mode, config))
        franq._build(config, load_lm(config, teacher_forces=teacher_forces))
        return franq

    # ------------------------------------------------------------------ components
    def preset(self, name: str) -> PresetPipeline:
        """The built components of preset ``name`` (``long``, ``short``, ``observer``, ``probe``, ``fast``
        or ``fast_short``)."""
        if name not in self._presets:
            self._presets[name] = self._build_preset(PRESETS[name])
        return self._presets[name]

    def _build_preset(self, preset) -> PresetPipeline:
        if self.lm is None and preset.evidence:
            raise InputError(f"mode: the {preset.name} preset needs the causal LM, which this pipeline (mode "
                             f"{self.config.mode!r}) did not load; build one with another mode to use it")
        if preset not in presets_for(self.config.mode, self.config):
            check_preset(self.config, preset, settings=True)  # asked for per call: the config checked only its mode's
        return build_preset(self.config, self.lm, preset, faithfulness=self.faithfulness,
                            equivalence=self._equivalence, prompt_style=self.prompt_style)

    @property
    def components(self) -> dict[str, dict[str, str]]:
        """Per preset, each stage's component, by name (what a newcomer reads first)."""
        out = {}
        for name, p in self._presets.items():
            out[name] = {
                "claims": "whole answer" if p.preset.whole_answer else getattr(self.decomposer, "name", "custom"),
                "evidence": p.evidence.name, "uq_faith": getattr(p.uq_faith, "name", "none"),
                "uq_unfaith": getattr(p.uq_unfaith, "name", "none"),
                "extra": ", ".join(s.name for s in p.extra) or "-",
                "faithfulness": (p.faithfulness or self.faithfulness).name,
                "mix": "p_f * uq_faith + (1 - p_f) * uq_unfaith" if p.preset.uq else "p_f",
                "calibrator": p.calibrator.info.path if p.calibrator else "none"}
            if p.calibrator is not None and p.calibrator.info.prior is not None:  # calibration.prior, or a moved file
                out[name]["calibrator_prior"] = f"{p.calibrator.info.prior:g}"
        return out

    # ------------------------------------------------------------------ public API
    def score(self, question: str, passages: Sequence[str | dict | Passage], answer: str, *,
              claims: Sequence[str] | None = None, mode: str | None = None) -> AnswerScore:
        """Score an existing answer, claim by claim. ``claims`` (optional) gives the claims
        as text instead of decomposing the answer; each is located in the answer.
        ``mode``: "long", "short" or "auto" (a single short sentence is short); default
        the config's."""
        given = parse_claims(claims, limits=self.config.limits)  # checked as they are read
        example = Example(parse_text(question, "question"), parse_passages(passages),
                          parse_text(answer, "answer"), claims=given[0] if given else None)
        check_example(example, limits=self.config.limits, claims=False)
        return self._score([example], mode=mode)[0]

    def score_many(self, examples: Iterable[Example | dict] | object, *, mode: str | None = None,
                   sample_sets: Sequence | None = None, generated: bool = False) -> list[AnswerScore]:
        """Score examples together, batching forward passes across them. An example is an
        :class:`~franq.Example` or a dict ``{"question", "passages", "answer", "claims"?,
        "id"?, "meta"?}`` (validated like a JSONL line); a pandas DataFrame with those
        columns gives one example per row. ``sample_sets[i]`` (short form, optional) are
        samples already drawn for example i. ``generated``: the answers are this pipeline's
        model's own, so short form scores them in-policy (with ``uq.short_scoring="auto"``);
        otherwise as an observer. Every example is checked against ``config.limits``
        (:mod:`franq.limits`) before any work."""
        examples = as_examples(examples, limits=self.config.limits, strict=self.config.batch.strict)
        return self._score(examples, mode=mode, sample_sets=sample_sets, generated=generated)

    def _score(self, examples: list[Example], *, mode: str | None = None, sample_sets: Sequence | None = None,
               generated: bool = False) -> list[AnswerScore]:
        """:meth:`score_many` of examples already checked."""
        chosen = self._choose_presets(examples, mode, generated=generated)
        results: list[AnswerScore | None] = [None] * len(examples)
        for name in PRESETS:
            idx = [i for i, p in enumerate(chosen) if p == name]
            if not idx:
                continue
            records = self._claims(self.preset(name), [examples[i] for i in idx])
            if sample_sets is not None:
                for r, i in zip(records, idx):
                    r.sample_set = sample_sets[i]
            for i, res in zip(idx, self._run(self.preset(name), records)):
                results[i] = res
        return results  # type: ignore[return-value]

    def answer(self, question: str, passages: Sequence[str | dict | Passage], *,
               max_new_tokens: int | None = None, mode: str | None = None) -> AnswerScore:
        """Generate a greedy answer with the passages and score it. Long form reuses the
        generation's log-probabilities as the with-passages pass; short form generates a
        one-line answer and its samples from one prefill. "auto" generates as long form
        and scores a single short sentence as short form. Deciding what to do with the
        result (answer, fall back or abstain, paper 000) is an application's job:
        :class:`franq.apps.answering.Answerer`."""
        question, passages = parse_text(question, "question"), parse_passages(passages)
        check_inputs(question, passages, limits=self.config.limits)
        if max_new_tokens is not None:
            check("max_new_tokens", max_new_tokens, subject="max_new_tokens", limits=self.config.limits)
        return self._answer(question, passages, max_new_tokens=max_new_tokens, mode=mode)

    def _answer(self, question: str, passages: tuple[Passage, ...], *, max_new_tokens: int | None,
                mode: str | None) -> AnswerScore:
        mode = mode or self.config.mode
        presets_for(mode)  # validates
        if self.lm is None or not loads_lm(mode):
            raise InputError(f"mode {mode!r}: franq answer generates with the causal LM, which mode "
                             f"{self.config.mode if self.lm is None else mode!r} does not load; use mode 'long', "
                             "'short' or 'auto' to generate an answer")
        self._stage("generation")
        if mode == "short":
            if short_preset(self.config, generated=True) == "probe":  # no samples to draw
                text, warnings = greedy_short_answer(self.lm, question, passages,
                                                     options=SamplingOptions.from_config(self.config.uq),
                                                     on_overflow=self.config.model.on_overflow,
                                                     style=self.prompt_style, max_new_tokens=max_new_tokens)
                samples = None
            else:
                text, warnings, samples = self.preset("short").evidence.greedy_answer(
                    question, passages, max_new_tokens=max_new_tokens)
            if not text:
                raise ValueError("the model generated an empty answer")
            result = self._score([Example(question, passages, text)], mode="short",
                                 sample_sets=None if samples is None else [samples], generated=True)[0]
            return dataclasses.replace(result, warnings=tuple(warnings) + result.warnings)
        n = max_new_tokens or self.config.model.max_new_tokens
        prompt = self.lm.rag_prompt(question, passages, reserve=n, on_overflow=self.config.model.on_overflow,
                                    style=self.prompt_style)
        gen = self.lm.generate(prompt.ids, max_new_tokens=n)
        if not gen.token_ids:
            raise ValueError("the model generated an empty answer")
        example = Example(question, passages, gen.text)
        if mode == "auto" and is_short_answer(gen.text):
            return self._score([example], mode="short", generated=True)[0]
        p = self.preset("long")
        [record] = self._claims(p, [example], token_ids=list(gen.token_ids), offsets=list(gen.offsets))
        record.rag_logprobs = np.asarray(gen.token_logprobs, dtype=np.float64)
        record.warnings[:0] = prompt.warnings
        return self._run(p, [record])[0]

    def score_observed(self, example: Example):
        """Score one long-form answer as :meth:`score_many` does, and also return the
        with-passages pass (its KV cache and token entropies) for evaluation baselines that
        ask follow-up questions about the answer (:mod:`franq.evaluation.observe`)."""
        p = self.preset("long")
        [record] = self._claims(p, [example])
        rag = self.lm.rag_prompt(example.question, example.passages, reserve=len(record.answer_ids),
                                 on_overflow=self.config.model.on_overflow, style=self.prompt_style)
        rag_pass = self.lm.answer_pass(rag.ids, record.answer_ids)
        record.rag_logprobs = rag_pass.token_logprobs
        record.warnings.extend(rag.warnings)
        return self._run(p, [record])[0], rag_pass

    def claim_evidence(self, examples: Sequence[Example], *, capture: CaptureSpec | None = None,
                       closed_book: bool = True) -> list[list[ClaimEvidence | None]]:
        """The long-form evidence of each claim of each example, without scoring: per
        example, one :class:`ClaimEvidence` per claim (``None`` where the claim is not
        scorable: not check-worthy or not aligned to the answer's tokens). ``capture`` asks
        the with-passages pass for its internals too (what ``franq fit probe`` reads);
        ``closed_book=False`` skips the closed-book pass (``closed_logprobs`` stay None)."""
        p = self.preset("long")
        records = self._claims(p, list(examples))
        TokenPasses(self.lm, on_overflow=self.config.model.on_overflow,
                    max_batch_tokens=self.config.batch.max_batch_tokens, capture=capture,
                    closed_book=closed_book, style=self.prompt_style).gather(records)
        return [[r.evidence(c) if scorable(p.preset, c) else None for c in r.claims] for r in records]

    # ------------------------------------------------------------------ stages
    def _choose_presets(self, examples: list[Example], mode: str | None, *, generated: bool = False) -> list[str]:
        mode = mode or self.config.mode
        presets_for(mode)  # validates the name
        short = short_preset(self.config, generated=generated)
        if mode == "auto":
            return [short if ex.claims is None and is_short_answer(ex.answer) else "long" for ex in examples]
        if mode == "fast":  # a short answer is one claim, read with its question, calibrated as such
            return ["fast_short" if ex.claims is None and is_short_answer(ex.answer) else "fast" for ex in examples]
        if mode == "short":
            for ex in examples:  # one given claim that is the whole answer carries its labels through
                if ex.claims is not None and list(ex.claims) != [ex.answer.strip()]:
                    raise InputError("claims: the short preset scores the whole answer as one claim; give no "
                                     "claims (or the answer itself as the one claim), or use mode 'long'")
            return [short] * len(examples)
        return [mode] * len(examples)

    def _stage(self, name: str) -> None:
        if self.on_stage is not None:
            self.on_stage(name)

    def _claims(self, p: PresetPipeline, examples: list[Example], *, token_ids=None, offsets=None
                ) -> list[AnswerRecord]:
        self._stage("claims")
        return find_claims(p.preset, examples, lm=self.lm, decomposer=self.decomposer, limits=self.config.limits,
                           token_ids=token_ids, offsets=offsets)

    def _run(self, p: PresetPipeline, records: list[AnswerRecord]) -> list[AnswerScore]:
        """Stages 2-7 (:mod:`franq.stages`) over the records, in order."""
        self._stage("evidence")
        batch = gather(p, records)
        if len(batch):
            self._stage("uq")
            score_uq(p, batch, closed_book_unfaith=self.config.uq.unfaith_samples == "closed"
                     and SAMPLES in p.preset.evidence)
            self._stage("faithfulness")
            judge_faithfulness(p.faithfulness or self.faithfulness, batch)
            self._stage("calibration")
            mix_batch(batch)
            calibrate(p.calibrator, batch)
        threshold = self.config.calibration.threshold
        if threshold is None and p.calibrator is not None:  # the calibrator file's (fit --target-precision)
            threshold = p.calibrator.threshold
        return answer_scores(p, records, batch, threshold=threshold, margin=self.config.calibration.uncertain_margin,
                             multilingual=self.config.model.multilingual)


STAGES = {"generation": "generating the answer", "claims": "finding the claims",
          "evidence": "reading the answer with and without the passages", "uq": "scoring the claims",
          "faithfulness": "checking the claims against the passages", "calibration": "calibrating"}
"""The stages :attr:`Franq.on_stage` is told of, in order, and what each does."""


@functools.lru_cache(maxsize=1)
def default_franq() -> Franq:
    """The embedded default pipeline, loaded on first use and reused."""
    return Franq.from_config(FranqConfig())


@functools.lru_cache(maxsize=1)
def fast_franq() -> Franq:
    """The default ``fast`` pipeline (the verifier alone, no causal LM), built on first use."""
    return Franq.from_config(FranqConfig(mode="fast"))


def score(question: str, passages: Sequence[str | dict | Passage], answer: str, *,
          claims: Sequence[str] | None = None, mode: str | None = None) -> AnswerScore:
    """Score ``answer`` to ``question`` given the retrieved ``passages`` with the default
    (embedded) pipeline, or with ``mode="fast"`` the fast one, which loads no causal LM
    (:func:`fast_franq`). See :meth:`Franq.score`."""
    if mode == "chat":  # the default config names no chat model: refused before anything loads
        raise InputError("mode 'chat': franq.score uses the default config, which names no chat model; build a "
                         "pipeline with one: franq.Franq.from_config(franq.FranqConfig.from_dict({'mode': 'chat', "
                         "'scorers': {'chat_p_true': {'model': ...}}}))")
    if mode == "fast" and default_franq.cache_info().currsize == 0:  # no LM loaded just for this
        return fast_franq().score(question, passages, answer, claims=claims)
    return default_franq().score(question, passages, answer, claims=claims, mode=mode)
