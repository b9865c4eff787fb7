"""Answer, fall back or abstain (paper 000): :class:`Answerer` wraps a :class:`franq.Franq`.
:meth:`franq.Franq.answer` generates an answer and scores it; :meth:`Answerer.answer`
then builds the named verifier and fallback on the pipeline's model and faithfulness
backend (once per answerer), verifies the answer and applies the threshold (the
policy's, the caller's, or the verifier's default)::

    answerer = Answerer(franq.Franq.from_config(config))
    result = answerer.answer(question, passages, verify="nli", fallback="closed_book")
    result.decision.action        # "answer", "fallback" or "abstain"
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from franq.apps.answering.items import QAItem
from franq.apps.answering.labelers import LocalLabeler
from franq.apps.answering.policy import SelectivePolicy, ThresholdPolicy, load_policy
from franq.apps.answering.verify import (
    AbstainFallback, ClosedBookFallback, DualGenerationVerifier, ModelFallback, NLIVerifier, PreAnswerVerifier,
    PTrueVerifier, SelfPTrueVerifier, TrivialVerifier,
)
from franq import AnswerScore, Decision, InputError
from franq.io import parse_passages
from franq.lm.prompts import SHORT_INSTRUCTION

VERIFIERS = ("trivial", "pre_answer", "nli", "dual", "p_true", "self_p_true")
DEFAULT_THRESHOLD = {"dual": 0.0}  # a log-probability difference; the others are probabilities (0.5)
FALLBACKS = ("closed_book", "abstain", "model", "model:PATH")


def _generation(franq, mode: str) -> dict:
    if mode == "short":
        return {"instruction": SHORT_INSTRUCTION, "max_new_tokens": franq.config.uq.max_sample_tokens}
    return {"instruction": None, "max_new_tokens": franq.config.model.max_new_tokens}


def build_verifier(name: str, franq, mode: str):
    if name == "trivial":
        return TrivialVerifier()
    if name == "pre_answer":
        return PreAnswerVerifier(LocalLabeler(franq.lm))
    if name == "nli":
        return NLIVerifier(franq.faithfulness)
    if name == "dual":
        return DualGenerationVerifier(franq.lm, **_generation(franq, mode))
    if name == "p_true":
        return PTrueVerifier()
    if name == "self_p_true":
        return SelfPTrueVerifier(LocalLabeler(franq.lm), instruction=_generation(franq, mode)["instruction"])
    raise InputError(f"verify: unknown verifier {name!r}; known: {list(VERIFIERS)}")


def build_fallback(spec: str, franq, mode: str):
    if spec == "abstain":
        return AbstainFallback()
    if spec == "closed_book":
        return ClosedBookFallback(franq.lm, **_generation(franq, mode))
    m = franq.config.model
    if spec == "model" and not m.fallback_path:
        raise InputError("fallback 'model': name the second model in the config ([model] fallback_path) "
                         "or give fallback='model:PATH'")
    if spec == "model" or (spec.startswith("model:") and spec[6:]):
        from franq.lm import CausalLM

        path = m.fallback_path if spec == "model" else spec[6:]
        return ModelFallback(CausalLM.load(path, device=m.device, dtype=m.dtype), **_generation(franq, mode))
    raise InputError(f"fallback: expected one of {list(FALLBACKS)}, got {spec!r}")


class Answerer:
    """A scoring pipeline that also decides: answer, fall back or abstain.

    ``answer(question, passages, verify=, fallback=, policy=, threshold=)``: ``verify`` is
    one of :data:`VERIFIERS`; ``fallback`` ``closed_book``, ``abstain``, ``model`` (the
    config's ``[model] fallback_path``) or ``model:PATH``; ``policy`` a threshold policy
    file from ``franq selective threshold`` or a :class:`ThresholdPolicy`. ``threshold``
    overrides the policy's (default: 0.5, or 0 for ``dual``). Without any of the three
    the result is :meth:`franq.Franq.answer`'s, with no decision.
    """

    def __init__(self, franq):
        self.franq = franq
        self._built: dict = {}  # verifiers and fallbacks by (kind, name, mode)

    def answer(self, question: str, passages, *, max_new_tokens: int | None = None, mode: str | None = None,
               verify: str | None = None, fallback: str | None = None, policy=None,
               threshold: float | None = None) -> AnswerScore:
        result = self.franq.answer(question, passages, max_new_tokens=max_new_tokens, mode=mode)
        if verify is None and fallback is None and policy is None:
            return result
        return decide(self.franq, self._built, result, parse_passages(passages), verify=verify, fallback=fallback,
                      policy=policy, threshold=threshold)


def decide(franq, cache: dict, result: AnswerScore, passages, *, verify: str | None, fallback: str | None,
           policy, threshold: float | None) -> AnswerScore:
    """``result`` with its :class:`~franq.Decision` (``cache`` keeps the verifiers and
    fallbacks built so far)."""
    source = None
    if policy is not None:
        source = str(policy) if isinstance(policy, (str, Path)) else "given"
        policy = load_policy(policy) if isinstance(policy, (str, Path)) else policy
        if isinstance(policy, SelectivePolicy):
            raise InputError("policy: a selective policy combines offline signals; apply it with "
                             "SelectivePolicy.probability (franq selective), not answer(policy=...)")
        if not isinstance(policy, ThresholdPolicy):
            raise InputError(f"policy: expected a ThresholdPolicy or a policy file, got {type(policy).__name__}")
        for given, fitted, what in ((verify, policy.verify, "verify"), (fallback, policy.fallback, "fallback")):
            if given is not None and given != fitted:
                raise InputError(f"{what}: {given!r} differs from the policy's {fitted!r} ({source})")
        verify, fallback = policy.verify, policy.fallback
        threshold = policy.threshold if threshold is None else threshold
    verify = verify or "trivial"
    fallback = fallback or "abstain"
    mode = result.mode
    key = ("verify", verify, mode)
    if key not in cache:
        cache[key] = build_verifier(verify, franq, mode)
    fkey = ("fallback", fallback, mode)
    if fkey not in cache:
        cache[fkey] = build_fallback(fallback, franq, mode)
    verifier, fb = cache[key], cache[fkey]
    item = QAItem(result.question, tuple(passages), answer=result.answer, score=result)
    score = float(verifier.predict([item])[0])
    if threshold is None:
        threshold = DEFAULT_THRESHOLD.get(verify, 0.5)
    if score >= threshold:
        d = Decision("answer", result.answer, verifier.name, score, threshold, fb.name, policy=source)
    else:
        alt = fb.answer(result.question, passages)
        d = Decision("abstain" if alt is None else "fallback", alt, verifier.name, score, threshold, fb.name,
                     fallback_answer=alt, policy=source)
    return dataclasses.replace(result, decision=d)
