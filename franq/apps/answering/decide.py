"""Answer, fall back or abstain (paper 000): :class:`Answerer` wraps a :class:`franq.Franq`.
:meth:`franq.Franq.answer` generates an answer and scores it; :meth:`Answerer.answer`
then builds the named answer check and fallback on the pipeline's model and faithfulness
backend (once per answerer), checks the answer and applies the threshold (the
policy's, the caller's, or the check's default)::

    answerer = Answerer(franq.Franq.from_config(config))
    result = answerer.answer(question, passages, verify="nli", fallback="closed_book")
    result.decision.action        # "answer", "fallback" or "abstain"

Answer checks and fallbacks are components of the kinds ``checks`` and ``fallbacks``
(declared by :mod:`franq.apps`; plugins add more through the entry point groups
``franq.checks`` / ``franq.fallbacks``): a factory ``make(franq, mode, settings)`` that
may declare ``settings`` (its config table, e.g. ``[fallbacks.model] path = ...``). "Verifier"
names only franq's three-way model (:mod:`franq.verifier`), which the ``nli`` check can use
(``[checks.nli] backend = "verifier"``); the answering app's kinds were called verifiers before 0.2.0.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from franq.apps.answering.items import QAItem
from franq.apps.answering.labelers import LocalLabeler
from franq.apps.answering.paper_methods import IntrinsicAbstentionCheck, PromptNLIBackend, SampledPTrueCheck
from franq.apps.answering.policy import SelectivePolicy, ThresholdPolicy, load_policy
from franq.apps.answering.verify import (
    AbstainFallback, ClosedBookFallback, DualGenerationCheck, ModelFallback, NLICheck, PreAnswerCheck,
    PTrueCheck, SelfPTrueCheck, TrivialCheck,
)
from franq import AnswerScore, Decision, InputError, registry
from franq.io import parse_passages
from franq.lm.prompts import SHORT_INSTRUCTION
from franq.lm.prompts import SHORT_ANSWER_TOKENS

CHECKS = ("trivial", "pre_answer", "nli", "dual", "p_true", "self_p_true", "intrinsic", "nli_prompt",
             "p_true_sampled")
"""The built-in answer checks (``registry.names("checks")`` adds the plugins')."""
DEFAULT_THRESHOLD = {"dual": 0.0}  # a perplexity (or percentile, log-prob) difference; the others: probabilities
FALLBACKS = ("closed_book", "abstain", "model")
"""The built-in fallbacks (``model`` reads its model from ``[fallbacks.model] path``)."""


def _generation(franq, mode: str, *, shown: bool = False) -> dict:
    """The answer prompt's instruction and token budget of ``mode``: short form, the samples'
    budget (what the checks were measured with), or with ``shown`` (a fallback's answer, shown
    to a user) the short answer's, which runs to its end of line (:data:`SHORT_ANSWER_TOKENS`)."""
    if mode == "short":
        n = franq.config.uq.max_sample_tokens
        return {"instruction": SHORT_INSTRUCTION, "max_new_tokens": max(n, SHORT_ANSWER_TOKENS) if shown else n}
    return {"instruction": None, "max_new_tokens": franq.config.model.max_new_tokens}


def _built(kind: str, what: str, name: str, franq, mode: str, given: dict | None = None):
    try:
        make = registry.lookup(kind, name)
        return make(franq, mode, {**franq.config.settings_for(kind, name), **(given or {})})
    except InputError as exc:
        raise InputError(f"{what}: {exc}") from None


def build_check(name: str, franq, mode: str):
    """The answer check registered as ``name``, on ``franq``'s model and faithfulness backend."""
    return _built("checks", "verify", name, franq, mode)


def build_fallback(spec: str, franq, mode: str):
    """The fallback registered as ``spec``."""
    return _built("fallbacks", "fallback", spec, franq, mode)


# ---------------------------------------------------------------------------- the built-ins
def trivial_check(franq, mode, settings):
    return TrivialCheck()


def _prompt(franq, settings) -> str:
    """A check's ``prompt`` setting, else the config's ``[prompts] style``."""
    return settings.get("prompt") or franq.config.prompts.style


PROMPT_SETTING = registry.Setting("prompt", str, None, "franq or paper (the paper's prompt, verbatim); "
                                                       "unset: the config's [prompts] style")


def pre_answer_check(franq, mode, settings):
    return PreAnswerCheck(LocalLabeler(franq.lm), prompt=_prompt(franq, settings))


def nli_check(franq, mode, settings):
    """000's post-answering NLI with the pipeline's faithfulness backend, or the one named
    by ``[checks.nli] backend`` (``"verifier"``: franq's own three-way verifier)."""
    name = settings["backend"]
    if not name or franq.faithfulness.name.split(":")[0] == name:
        return NLICheck(franq.faithfulness)
    return NLICheck(registry.build("faithfulness", name, franq.config, franq.lm))


nli_check.settings = (registry.Setting(
    "backend", str, None, "the faithfulness backend that checks the answer, e.g. 'verifier' (unset: the pipeline's)"),)


def nli_prompt_check(franq, mode, settings):
    """000 A.3: Post-Answering NLI with the generating model as the NLI model (p("1"))."""
    return NLICheck(PromptNLIBackend(franq.lm, pair=settings["pair"]))


def dual_check(franq, mode, settings):
    return DualGenerationCheck(franq.lm, **_generation(franq, mode), score=settings["score"],
                               answer_style=franq.prompt_style)


def intrinsic_check(franq, mode, settings):
    return IntrinsicAbstentionCheck(franq.lm if settings["generate"] else None,
                                       max_new_tokens=_generation(franq, mode)["max_new_tokens"])


def p_true_sampled_check(franq, mode, settings):
    g = _generation(franq, mode)
    return SampledPTrueCheck(franq.lm, LocalLabeler(franq.lm), n_samples=settings["n_samples"],
                                n_judgements=settings["n_judgements"], temperature=settings["temperature"],
                                instruction=g["instruction"], max_new_tokens=g["max_new_tokens"],
                                seed=settings["seed"], prompt=_prompt(franq, settings),
                                answer_style=franq.prompt_style)


def p_true_check(franq, mode, settings):
    return PTrueCheck()


def self_p_true_check(franq, mode, settings):
    return SelfPTrueCheck(LocalLabeler(franq.lm), instruction=_generation(franq, mode)["instruction"],
                             prompt=_prompt(franq, settings))


pre_answer_check.settings = (PROMPT_SETTING,)
self_p_true_check.settings = (PROMPT_SETTING,)
dual_check.settings = (registry.Setting("score", str, "perplexity", "perplexity (000: closed-book minus RAG "
                                           "perplexity), percentile (Wu et al.) or log_prob"),)
nli_prompt_check.settings = (registry.Setting("pair", bool, False, "read p(1) / (p(1) + p(0)) instead of p(1)"),)
intrinsic_check.settings = (registry.Setting("generate", bool, True, "answer 000's abstention prompt (else "
                                                "read the given answer's refusal)"),)
p_true_sampled_check.settings = (
    registry.Setting("n_samples", int, 20, "sampled answers per question (003: 20)"),
    registry.Setting("n_judgements", int, 5, "sampled judgements per answer (003: 5)"),
    registry.Setting("temperature", float, 1.0, "sampling temperature of the answers"),
    registry.Setting("seed", int, 0, "seed of the answers and the judgements"), PROMPT_SETTING)


def abstain_fallback(franq, mode, settings):
    return AbstainFallback()


def closed_book_fallback(franq, mode, settings):
    return ClosedBookFallback(franq.lm, **_generation(franq, mode, shown=True), answer_style=franq.prompt_style)


def model_fallback(franq, mode, settings):
    """A second model with the passages: ``[fallbacks.model] path``."""
    if not settings["path"]:
        raise InputError("fallback 'model': name the second model in the config ([fallbacks.model] path)")
    from franq.lm import CausalLM

    m = franq.config.model
    return ModelFallback(CausalLM.load(settings["path"], device=m.device, dtype=m.dtype),
                         **_generation(franq, mode, shown=True))


model_fallback.settings = (registry.Setting(
    "path", str, None, "a second (e.g. larger) local causal LM that answers with the passages"),)


class Answerer:
    """A scoring pipeline that also decides: answer, fall back or abstain.

    ``answer(question, passages, verify=, fallback=, policy=, threshold=)``: ``verify`` is
    one of :data:`CHECKS` (or a plugin's); ``fallback`` ``closed_book``, ``abstain`` or
    ``model`` (the config's ``[fallbacks.model] path``); ``policy`` a threshold policy
    file from ``franq selective threshold`` or a :class:`ThresholdPolicy`. ``threshold``
    overrides the policy's (default: 0.5, or 0 for ``dual``). Without any of the three
    the result is :meth:`franq.Franq.answer`'s, with no decision.
    """

    def __init__(self, franq):
        self.franq = franq
        self._built: dict = {}  # checks and fallbacks by (kind, name, mode)

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
    """``result`` with its :class:`~franq.Decision` (``cache`` keeps the checks and
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
        cache[key] = build_check(verify, franq, mode)
    fkey = ("fallback", fallback, mode)
    if fkey not in cache:
        cache[fkey] = build_fallback(fallback, franq, mode)
    check, fb = cache[key], cache[fkey]
    item = QAItem(result.question, tuple(passages), answer=result.answer, score=result)
    score = float(check.predict([item])[0])
    if threshold is None:
        threshold = DEFAULT_THRESHOLD.get(verify, 0.5)
    if score >= threshold:
        d = Decision("answer", result.answer, check.name, score, threshold, fb.name, policy=source)
    else:
        alt = fb.answer(result.question, passages)
        d = Decision("abstain" if alt is None else "fallback", alt, check.name, score, threshold, fb.name,
                     fallback_answer=alt, policy=source, rejected_answer=result.answer)
        # the answer to show is the top-level one; the rejected one (whose claims these are) is kept in the decision
        return dataclasses.replace(result, answer=alt or "", decision=d)
    return dataclasses.replace(result, decision=d)
