"""Franq: one pipeline of named components, run in this order for every answer::

    claims       decomposer + aligner (long) | the whole answer (short)
    evidence     passes (teacher forcing with / without passages) | samples
    uq_faith     a scorer: p(c|x,r) (long) | semantic entropy (short)
    uq_unfaith   a scorer: p(c|x) (long) | sum of eigenvalues (short)
    extra        more scorers whose signals are kept in the results
    faithfulness P(claim supported by the passages)
    mix          P(true) = P_f * UQ_faith + (1 - P_f) * UQ_unfaith (uncalibrated)
    calibrator   isotonic maps fitted on labelled claims (none / calibrated / condition / soft)

Long and short form are two presets of this one class (:mod:`franq.presets`); every
component is chosen by name in :class:`~franq.config.FranqConfig` and built through
:mod:`franq.registry`. Forward passes and faithfulness calls are batched across all
answers of a :meth:`Franq.score_many` call.
"""
from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Iterable, Sequence

import numpy as np

from calibration.contract import ClaimInputs
from claims.align import GIVEN_CLAIM_MIN_SHARE, align_claims, answer_units, locate_claim
from claims.decompose import decompose_all
from franq import registry
from franq.calibrate import resolve_calibrator
from franq.config import FranqConfig
from franq.errors import InputError, redact
from franq.evidence import ANSWER_SAMPLES, PASSES, SAMPLES, ClaimEvidence
from franq.evidence.passes import TokenPasses
from franq.evidence.samples import SampleDraws, SamplingOptions, greedy_short_answer
from franq.faithfulness.base import has_conditions, predict_conditions, predict_faithfulness
from franq.io import Example, as_examples, parse_claims, parse_passages, parse_text
from franq.limits import check, check_inputs
from franq.lm.capture import CaptureSpec
from franq.lm.prompts import answer_prompt_version, passages_context
from franq.mix import mix
from franq.presets import (PRESETS, Preset, check_preset, is_short_answer, preset_notes, presets_for, scorer_names,
                           short_preset)
from franq.scorers.base import check_output, primary
from franq.stages import AnswerWork, PresetPipeline, capture_spec, claim_score, scorable, whole_answer_claim
from franq.types import AnswerScore, ClaimScore, Passage, Stack

log = logging.getLogger(__name__)


class Franq:
    """FRANQ (paper section 2): claim-level P(true) of RAG answers.

    Build with :meth:`from_config`; ``score`` / ``score_many`` score existing answers,
    ``answer`` generates one and scores it. ``components`` lists what runs, by stage.
    """

    def __init__(self, config: FranqConfig, lm, *, decomposer=None, faithfulness=None, equivalence=None):
        self.config = config
        self.lm = lm
        if hasattr(lm, "prompt_style"):  # a CausalLM: the answer prompt's wording ([prompts] answer)
            lm.prompt_style = config.prompts.of("answer")
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
        configure_threads(config=config.model.threads, limits=config.limits)
        return cls(config, load_lm(config))

    # ------------------------------------------------------------------ components
    def preset(self, name: str) -> PresetPipeline:
        """The built components of preset ``name`` (``long``, ``short``, ``observer`` or ``probe``)."""
        if name not in self._presets:
            self._presets[name] = self._build_preset(PRESETS[name])
        return self._presets[name]

    def _build_preset(self, preset: Preset) -> PresetPipeline:
        c = self.config
        check_preset(c, preset)  # a preset other than the config's mode asked for per call
        missing = frozenset(getattr(self.faithfulness, "needs", ())) - preset.evidence  # a backend passed in
        if missing:
            raise InputError(f"faithfulness {self.faithfulness.name!r} cannot run in the {preset.name} preset: "
                             f"it reads {sorted(missing)}, which the {preset.name} preset does not gather")
        names = scorer_names(c, preset)
        build = functools.partial(registry.build, "scorers", config=c, lm=self.lm)
        uq_faith, uq_unfaith = build(name=names.faith), build(name=names.unfaith)
        # an extra scorer that is already UQ_faith or UQ_unfaith runs once: its signals are kept anyway
        extra = tuple(build(name=n) for n in dict.fromkeys(names.extra) if n not in (names.faith, names.unfaith))
        declared = [sig.name for s in {x.name: x for x in (uq_faith, uq_unfaith, *extra)}.values() for sig in s.signals]
        clash = sorted({n for n in declared if declared.count(n) > 1})
        if clash:
            raise InputError(f"config 'uq.{preset.name}': two scorers declare the signal(s) {clash}; "
                             f"signal names must be unique within a preset")
        if SAMPLES in preset.evidence:
            judge = self._equivalence or registry.build("equivalence", c.uq.equivalence, c, self.lm)
            evidence = SampleDraws(self.lm, judge, options=SamplingOptions.from_config(c.uq),
                                   on_overflow=c.model.on_overflow, with_answer=ANSWER_SAMPLES in preset.evidence,
                                   max_batch_tokens=c.batch.max_batch_tokens)
            more = {"equivalence": judge.name, "sampling": f"n={c.uq.n_samples},temperature={c.uq.temperature:g},"
                                                           f"max_tokens={c.uq.max_sample_tokens},seed={c.uq.seed}"}
        else:
            evidence = TokenPasses(self.lm, on_overflow=c.model.on_overflow, max_batch_tokens=c.batch.max_batch_tokens,
                                   capture=capture_spec(self.faithfulness, uq_faith, uq_unfaith, *extra))
            more = {}
        stack = Stack.build(model=self.lm.name, faithfulness=self.faithfulness.name, uq_faith=uq_faith.name,
                            uq_unfaith=uq_unfaith.name, mode=preset.name,
                            prompt_version=answer_prompt_version(c.prompts.of("answer")), **more)
        calibrator, warnings = resolve_calibrator(c.calibration.calibrator, stack.to_dict(),
                                                  on_mismatch=c.calibration.on_mismatch)
        if calibrator is not None and calibrator.needs_conditions and not has_conditions(self.faithfulness):
            raise InputError(f"calibrator {calibrator.info.path} is a three-condition calibrator; the faithfulness "
                             f"backend {self.faithfulness.name!r} gives no P_contradicted (use 'verifier')")
        warnings = (*warnings, *preset_notes(c, preset, calibrated=calibrator is not None))
        return PresetPipeline(preset, evidence, uq_faith, uq_unfaith, extra, stack.to_dict(), stack, calibrator,
                              warnings)

    @property
    def components(self) -> dict[str, dict[str, str]]:
        """Per preset, each stage's component, by name (what a newcomer reads first)."""
        out = {}
        for name, p in self._presets.items():
            out[name] = {
                "claims": "whole answer" if p.preset.whole_answer else getattr(self.decomposer, "name", "custom"),
                "evidence": p.evidence.name, "uq_faith": p.uq_faith.name, "uq_unfaith": p.uq_unfaith.name,
                "extra": ", ".join(s.name for s in p.extra) or "-", "faithfulness": self.faithfulness.name,
                "mix": "p_f * uq_faith + (1 - p_f) * uq_unfaith",
                "calibrator": p.calibrator.info.path if p.calibrator else "none"}
        return out

    # ------------------------------------------------------------------ public API
    def score(self, question: str, passages: Sequence[str | dict | Passage], answer: str, *,
              claims: Sequence[str] | None = None, mode: str | None = None) -> AnswerScore:
        """Score an existing answer, claim by claim. ``claims`` (optional) gives the claims
        as text instead of decomposing the answer; each is located in the answer.
        ``mode``: "long", "short" or "auto" (a single short sentence is short); default
        the config's."""
        given = parse_claims(claims, limits=self.config.limits)
        example = Example(parse_text(question, "question"), parse_passages(passages),
                          parse_text(answer, "answer"), claims=given[0] if given else None)
        return self.score_many([example], mode=mode)[0]

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
        examples = as_examples(examples, limits=self.config.limits)
        chosen = self._choose_presets(examples, mode, generated=generated)
        results: list[AnswerScore | None] = [None] * len(examples)
        for name in PRESETS:
            idx = [i for i, p in enumerate(chosen) if p == name]
            if not idx:
                continue
            work = self._claims(self.preset(name), [examples[i] for i in idx])
            if sample_sets is not None:
                for w, i in zip(work, idx):
                    w.sample_set = sample_sets[i]
            for i, res in zip(idx, self._run(self.preset(name), work)):
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
        if mode == "short":
            if short_preset(self.config, generated=True) == "probe":  # no samples to draw
                text, warnings = greedy_short_answer(self.lm, question, passages,
                                                     options=SamplingOptions.from_config(self.config.uq),
                                                     on_overflow=self.config.model.on_overflow)
                samples = None
            else:
                text, warnings, samples = self.preset("short").evidence.greedy_answer(question, passages)
            if not text:
                raise ValueError("the model generated an empty answer")
            result = self.score_many([Example(question, passages, text)], mode="short",
                                     sample_sets=None if samples is None else [samples], generated=True)[0]
            return dataclasses.replace(result, warnings=tuple(warnings) + result.warnings)
        n = max_new_tokens or self.config.model.max_new_tokens
        prompt = self.lm.rag_prompt(question, passages, reserve=n, on_overflow=self.config.model.on_overflow)
        gen = self.lm.generate(prompt.ids, max_new_tokens=n)
        if not gen.token_ids:
            raise ValueError("the model generated an empty answer")
        example = Example(question, passages, gen.text)
        if mode == "auto" and is_short_answer(gen.text):
            return self.score_many([example], mode="short", generated=True)[0]
        p = self.preset("long")
        work = self._claims(p, [example], token_ids=list(gen.token_ids), offsets=list(gen.offsets))
        work[0].rag_logprobs = np.asarray(gen.token_logprobs, dtype=np.float64)
        work[0].warnings[:0] = prompt.warnings
        return self._run(p, work)[0]

    def score_observed(self, example: Example):
        """Score one long-form answer as :meth:`score_many` does, and also return the
        with-passages pass (its KV cache and token entropies) for evaluation baselines that
        ask follow-up questions about the answer (:mod:`franq.evaluation.observe`)."""
        p = self.preset("long")
        work = self._claims(p, [example])
        w = work[0]
        rag = self.lm.rag_prompt(example.question, example.passages, reserve=len(w.answer_ids),
                                 on_overflow=self.config.model.on_overflow)
        rag_pass = self.lm.answer_pass(rag.ids, w.answer_ids)
        w.rag_logprobs = rag_pass.token_logprobs
        w.warnings.extend(rag.warnings)
        return self._run(p, work)[0], rag_pass

    def claim_evidence(self, examples: Sequence[Example], *, capture: CaptureSpec | None = None,
                       closed_book: bool = True) -> list[list[ClaimEvidence | None]]:
        """The long-form evidence of each claim of each example, without scoring: per
        example, one :class:`ClaimEvidence` per claim (``None`` where the claim is not
        scorable: not check-worthy or not aligned to the answer's tokens). ``capture`` asks
        the with-passages pass for its internals too (what ``franq fit probe`` reads);
        ``closed_book=False`` skips the closed-book pass (``closed_logprobs`` stay None)."""
        p = self.preset("long")
        work = self._claims(p, list(examples))
        TokenPasses(self.lm, on_overflow=self.config.model.on_overflow,
                    max_batch_tokens=self.config.batch.max_batch_tokens, capture=capture,
                    closed_book=closed_book).gather(work)
        out = []
        for w in work:
            ev = iter(self._evidence(p, w))
            out.append([next(ev) if scorable(p, c) else None for c in w.claims])
        return out

    # ------------------------------------------------------------------ stages
    def _choose_presets(self, examples: list[Example], mode: str | None, *, generated: bool = False) -> list[str]:
        mode = mode or self.config.mode
        presets_for(mode)  # validates the name
        short = short_preset(self.config, generated=generated)
        if mode == "auto":
            return [short if ex.claims is None and is_short_answer(ex.answer) else "long" for ex in examples]
        if mode == "short":
            for ex in examples:  # one given claim that is the whole answer carries its labels through
                if ex.claims is not None and list(ex.claims) != [ex.answer.strip()]:
                    raise InputError("claims: the short preset scores the whole answer as one claim; give no "
                                     "claims (or the answer itself as the one claim), or use mode 'long'")
            return [short] * len(examples)
        return [mode] * len(examples)

    def _claims(self, p: PresetPipeline, examples: list[Example], *, token_ids=None, offsets=None
                ) -> list[AnswerWork]:
        """Stage 1: the claims of each answer, aligned to its tokens (long form; the whole
        answer as one claim in short form, aligned too when the preset runs token passes)."""
        if p.preset.whole_answer:
            if PASSES not in p.preset.evidence:
                return [AnswerWork(ex, [whole_answer_claim(ex.answer)]) for ex in examples]
            work = []
            for ex in examples:
                ids, offs = self.lm.encode_answer(ex.answer)
                work.append(AnswerWork(ex, align_claims(ex.answer, [whole_answer_claim(ex.answer)], offs, ids), ids))
            return work
        decs = iter(decompose_all(self.decomposer, [ex.answer for ex in examples if ex.claims is None]))
        work = []
        for ex in examples:
            if token_ids is None:
                ids, offs = self.lm.encode_answer(ex.answer)
            else:
                ids, offs = token_ids, offsets
            warnings: list[str] = []
            if ex.claims is None:
                d = next(decs)
                claims, warnings = list(d.claims), list(d.warnings)
                check("claims", len(claims), subject="the answer (decomposed)", limits=self.config.limits)
            else:
                units = answer_units(ex.answer)  # split once, not once per claim
                claims = [locate_claim(ex.answer, c, sentence=i, units=units, min_share=GIVEN_CLAIM_MIN_SHARE)
                          for i, c in enumerate(ex.claims)]
                if not ex.claims:
                    warnings.append("claims: an empty list was given, so no claim was scored; leave 'claims' "
                                    "out to split the answer into claims")
            work.append(AnswerWork(ex, align_claims(ex.answer, claims, offs, ids), ids, warnings))
        return work

    def _run(self, p: PresetPipeline, work: list[AnswerWork]) -> list[AnswerScore]:
        """Stages 2-7: evidence, scorers, faithfulness, mix, calibrator."""
        p.evidence.gather(work)
        evidence = [e for w in work for e in self._evidence(p, w)]
        n = len(evidence)
        values: dict[str, np.ndarray] = {}
        raw: dict[str, np.ndarray] = {}
        cal = cond = None
        if n:
            for role, scorer in (("faith", p.uq_faith), ("unfaith", p.uq_unfaith), *(("extra", s) for s in p.extra)):
                batch = evidence
                if role == "unfaith" and SAMPLES in p.preset.evidence and self.config.uq.unfaith_samples == "closed":
                    batch = [dataclasses.replace(e, samples=e.closed_samples) for e in evidence]
                out = check_output(scorer, scorer.score(batch), n)
                values.update(out)
                if role in ("faith", "unfaith"):
                    raw[role] = np.clip(scorer.probability(out[primary(scorer).name]), 0.0, 1.0)
            cond = predict_conditions(self.faithfulness, evidence)  # None: P(supported) only
            raw["p_f"] = cond.p_supported if cond is not None else predict_faithfulness(self.faithfulness, evidence)
            raw["p_true"] = mix(raw["p_f"], raw["faith"], raw["unfaith"])
            cal = p.calibrator.apply(ClaimInputs(
                raw["p_f"], raw["faith"], raw["unfaith"], signals=values,
                p_contradicted=None if cond is None else cond.p_contradicted,
                p_not_mentioned=None if cond is None else cond.p_not_mentioned)) if p.calibrator else None
        k = 0
        results = []
        for w in work:
            out = []
            for c in w.claims:
                if not c.check_worthy:
                    out.append(ClaimScore(c, "not_check_worthy"))
                elif not scorable(p, c):
                    out.append(ClaimScore(c, "unaligned"))
                else:
                    out.append(claim_score(c, k, raw, cal, values, self.config.calibration.threshold, cond))
                    k += 1
            results.append(AnswerScore(
                question=w.example.question, answer=w.example.answer, claims=tuple(out), mode=p.preset.form,
                stack=p.result_stack, calibrator=p.calibrator.info if p.calibrator else None,
                warnings=tuple(redact(x) for x in (*w.warnings, *p.calibration_warnings))))
        return results

    def _evidence(self, p: PresetPipeline, w: AnswerWork) -> list[ClaimEvidence]:
        """One :class:`ClaimEvidence` per scorable claim of an answer (the passages joined once)."""
        ex = w.example
        context = passages_context(ex.passages)
        return [ClaimEvidence(c, ex.question, context,
                              f"{ex.question} {ex.answer.strip()}" if p.preset.whole_answer else c.text,
                              rag_logprobs=w.rag_logprobs, closed_logprobs=w.closed_logprobs,
                              samples=w.samples, closed_samples=w.closed_samples, internals=w.internals,
                              closed_internals=w.closed_internals, passages=tuple(ex.passages))
                for c in w.claims if scorable(p, c)]


@functools.lru_cache(maxsize=1)
def default_franq() -> Franq:
    """The embedded default pipeline, loaded on first use and reused."""
    return Franq.from_config(FranqConfig())


def score(question: str, passages: Sequence[str | dict | Passage], answer: str, *,
          claims: Sequence[str] | None = None, mode: str | None = None) -> AnswerScore:
    """Score ``answer`` to ``question`` given the retrieved ``passages`` with the default
    (embedded) pipeline. See :meth:`Franq.score`."""
    return default_franq().score(question, passages, answer, claims=claims, mode=mode)
