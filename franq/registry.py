"""The one place that maps a config name to a component class.

Four kinds of component are chosen by name in :class:`~franq.config.FranqConfig`:

    scorers        franq.scorers.*        UQ_faith / UQ_unfaith and extra signals
    faithfulness   franq.faithfulness.*   P(claim supported by the passages)
    decomposers    claims/, franq.lm      answer -> claims
    equivalence    franq.equivalence.*    do two sampled answers mean the same?

Code outside the scoring library adds its own kinds with :func:`add_kind` (the
applications, :mod:`franq.apps`, add ``apps``, ``checks``, ``fallbacks`` and
``raters`` when imported): the library names no application. A package whose import
declares kinds names itself in the entry point group ``franq.kinds`` (franq's own
``setup.cfg`` lists ``franq.apps`` there), so the kinds are known wherever they are asked
for, e.g. when a config file has a ``[fallbacks.model]`` table, before anything imported
the package.

Built-in components are listed as ``"module:Class"`` strings (imported on first use, so
naming one costs nothing). Other packages add their own through Python entry points in
the group ``franq.<kind>`` (``franq.scorers``, ``franq.faithfulness``, ``franq.apps``, ...);
e.g. in a plugin's ``pyproject.toml``::

    [project.entry-points."franq.faithfulness"]
    my_nli = "my_package.backend:MyNLIFaithfulness"

A registered object is a component class or a factory function. A class has a ``name``
(its stable id in results) and ``needs`` (the evidence kinds it reads, :mod:`franq.evidence`;
a classmethod ``needs_for(config)`` may refine it), and may declare ``settings``
(:class:`~franq.settings.Setting`: its own config table, read with
``config.settings_for(kind, name)``). It is built by ``cls.from_config(config, lm)`` when it
defines one, else by ``cls()``. A factory function ``f(config, lm)`` returns the component
(its ``needs`` and ``settings`` attributes, if any, count too). ``lm`` is the pipeline's
loaded :class:`~franq.lm.CausalLM`.
"""
from __future__ import annotations

import functools
import importlib
from importlib.metadata import entry_points

from franq.errors import InputError
from franq.settings import Setting

__all__ = ["BUILTIN", "Setting", "add_kind", "build", "clear_cache", "kinds", "lookup",
           "names", "needs"]
"""With the lookups, what code outside the library needs to declare components: ``Setting``
(a component's settings)."""

BUILTIN: dict[str, dict[str, str]] = {
    "scorers": {
        "claim_prob": "franq.scorers.claim_prob:MaxClaimProbabilityScorer",
        "parametric": "franq.scorers.parametric:ParametricKnowledgeScorer",
        "semantic_entropy": "franq.scorers.semantic_entropy:SemanticEntropyScorer",
        "eigval": "franq.scorers.eigval:SumEigenvaluesScorer",
        "degree_matrix": "franq.scorers.degree_matrix:DegreeMatrixScorer",
        "eccentricity": "franq.scorers.eccentricity:EccentricityScorer",
        "lexical_similarity": "franq.scorers.lexical_similarity:LexicalSimilarityScorer",
        "semantic_entropy_norm": "franq.scorers.semantic_entropy_norm:NormalizedSemanticEntropyScorer",
        "answer_share": "franq.scorers.answer_share:AnswerShareScorer",
        "answer_mass": "franq.scorers.answer_mass:AnswerMassScorer",
        "answer_consistency": "franq.scorers.answer_consistency:AnswerConsistencyScorer",
        "answer_likelihood": "franq.scorers.answer_likelihood:AnswerLikelihoodScorer",
        "rauq": "franq.scorers.rauq:RAUQScorer",
        "ccp": "franq.scorers.ccp:ClaimConditionedProbabilityScorer",
        "truth_probe": "franq.scorers.truth_probe:TruthProbeScorer",
        "se_probe": "franq.scorers.se_probe:SemanticEntropyProbeScorer",
        "se_probe_closed": "franq.scorers.se_probe:ClosedBookSemanticEntropyProbeScorer",
        "chat_p_true": "franq.scorers.chat_p_true:ChatPTrueScorer",
        "chat_p_true_rag": "franq.scorers.chat_p_true_rag:ChatPTrueRagScorer",
    },
    "faithfulness": {
        "combined": "franq.faithfulness.combined:CombinedFaithfulness",
        "lexical": "franq.faithfulness.lexical:LexicalFaithfulness",
        "context_pmi": "franq.faithfulness.context_pmi:ContextPMIFaithfulness",
        "alignscore": "franq.faithfulness.alignscore:AlignScoreFaithfulness",
        "nli": "franq.faithfulness.nli:NLIFaithfulness",
        "judge": "franq.faithfulness.chat_judge:judge_faithfulness",
        "lookback": "franq.faithfulness.lookback:LookbackFaithfulness",
        "hidden_probe": "franq.faithfulness.hidden_probe:HiddenProbeFaithfulness",
        "verifier": "franq.faithfulness.verifier:VerifierFaithfulness",
        "minicheck": "franq.faithfulness.minicheck:MiniCheckFaithfulness",
        "hhem": "franq.faithfulness.hhem:HHEMFaithfulness",
        "factcg": "franq.faithfulness.factcg:FactCGFaithfulness",
    },
    "decomposers": {
        "sentence": "claims.decompose:SentenceDecomposer",
        "atomic": "claims.atomic:AtomicDecomposer",
        "llm": "franq.decomposers:llm_decomposer",
    },
    "equivalence": {
        "normalized": "franq.equivalence.normalized:NormalizedAnswerJudge",
        "lm": "franq.equivalence.lm_judge:LMJudge",
        "jaccard": "franq.equivalence.jaccard:JaccardJudge",
        "nli": "franq.equivalence.nli:NLIJudge",
        "verifier": "franq.equivalence.verifier:VerifierJudge",
        "nli_argmax": "franq.equivalence.nli:NLIArgmaxJudge",
    },
}
_LABEL = {"scorers": "scorer", "faithfulness": "faithfulness backend", "decomposers": "decomposer",
          "equivalence": "equivalence judge"}


def add_kind(kind: str, builtin: dict[str, str], *, label: str) -> None:
    """Declare a kind of component (``builtin``: name -> ``"module:attr"``; plugins come
    from the entry point group ``franq.<kind>``); ``label`` names one in errors. Declaring
    a kind again updates its built-ins."""
    if not kind.isidentifier():
        raise ValueError(f"component kind must be an identifier, got {kind!r}")
    BUILTIN.setdefault(kind, {}).update(builtin)
    _LABEL[kind] = label


def kinds() -> tuple[str, ...]:
    """Every kind: the library's four, then those added by :func:`add_kind` (the packages
    of the ``franq.kinds`` entry point group are imported first)."""
    _declared_kinds()
    return tuple(BUILTIN)


@functools.lru_cache(maxsize=1)
def _declared_kinds() -> None:
    """Import each package of the ``franq.kinds`` entry point group once: importing it
    declares its kinds (:func:`add_kind`). A broken one is skipped with a warning."""
    import logging

    for ep in entry_points(group="franq.kinds"):
        try:
            ep.load()
        except Exception as exc:  # noqa: BLE001 - a broken plugin names itself, the rest still load
            logging.getLogger(__name__).warning("entry point franq.kinds %r (%s) failed to load: %s",
                                                ep.name, ep.value, exc)


@functools.lru_cache(maxsize=None)
def _plugins(kind: str) -> dict[str, object]:
    return {ep.name: ep for ep in entry_points(group=f"franq.{kind}")}


def names(kind: str) -> list[str]:
    """Every name a config may use for ``kind``: built-in first, then plugins."""
    _check_kind(kind)
    return list(BUILTIN[kind]) + sorted(n for n in _plugins(kind) if n not in BUILTIN[kind])


def lookup(kind: str, name: str):
    """The component class registered as ``name`` (built-in, or a plugin's entry point)."""
    _check_kind(kind)
    if name in BUILTIN[kind]:
        module, _, attr = BUILTIN[kind][name].partition(":")
        return getattr(importlib.import_module(module), attr)
    ep = _plugins(kind).get(name)
    if ep is None:
        raise InputError(f"unknown {_LABEL[kind]} {name!r}; known: {names(kind)}")
    try:
        return ep.load()
    except Exception as exc:  # noqa: BLE001 - a broken plugin names itself
        raise InputError(f"{_LABEL[kind]} {name!r}: its entry point {ep.value!r} failed to load: {exc}") from exc


def stack_scorer(value: str):
    """The scorer class a stack's ``uq_faith`` / ``uq_unfaith`` names: a registered scorer, or
    one with the model it asked after a colon (``chat_p_true:llama3.1:8b``)."""
    return lookup("scorers", value if value in names("scorers") else value.split(":", 1)[0])


def needs(cls, config=None) -> frozenset[str]:
    """The evidence kinds a component class reads (for this config, when it depends on it)."""
    refine = getattr(cls, "needs_for", None)
    if refine is not None and config is not None:
        return frozenset(refine(config))
    return frozenset(getattr(cls, "needs", ()))


def build(kind: str, name: str, config, lm):
    """A ready component: ``cls.from_config(config, lm)`` if defined, ``cls()`` for other
    classes, ``f(config, lm)`` for a factory function."""
    obj = lookup(kind, name)
    factory = getattr(obj, "from_config", None)
    if factory is not None:
        return factory(config, lm)
    return obj() if isinstance(obj, type) else obj(config, lm)


def clear_cache() -> None:
    """Forget the entry points seen so far (after installing a plugin in-process)."""
    _plugins.cache_clear()
    _declared_kinds.cache_clear()


def _check_kind(kind: str) -> None:
    if kind not in BUILTIN:
        _declared_kinds()
    if kind not in BUILTIN:
        raise ValueError(f"component kind must be one of {list(kinds())}, got {kind!r}")
