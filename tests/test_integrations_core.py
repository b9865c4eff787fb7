"""The adapters' shared reading of a result (franq/apps/integrations/scores.py), the
openevals evaluator (it needs no package) and the one-line errors naming each extra; the
adapters against their real frameworks are tests/integrations/."""
from __future__ import annotations

import dataclasses
import sys
from types import SimpleNamespace

import pytest

from franq import InputError
from franq.apps.integrations import scores
from franq.apps.integrations.openevals import franq_evaluator, make_franq_evaluator
from franq.apps.integrations.testing import fake_scorer

Q = "When was the Eiffel Tower built?"
P = ["The Eiffel Tower was built from 1887 to 1889 in Paris."]
A = "It was built in 1889. It is made of gold. It is."


def test_the_answer_value_is_the_weakest_counted_claim_and_the_reason_names_it():
    result = fake_scorer()(Q, P, A)
    s = scores.summarize(result)
    assert [(c.value, c.label) for c in s.claims] == [(1.0, "likely_true"), (0.0, "likely_false"), (0.5, "uncertain")]
    assert s.value == 0.0 and s.label == "likely_false" and s.weakest.index == 1
    assert s.reason == ("weakest claim #1 'It is made of gold.': P(true) = 0.00 (likely_false); "
                        "1 uncertain claim(s) left out")


def test_calibrated_p_true_wins_over_raw_and_unscored_claims_are_left_out():
    result = fake_scorer()(Q, P, "It was built in 1889. It is made of gold.")
    c0, c1 = result.claims
    result = dataclasses.replace(result, claims=(
        dataclasses.replace(c0, p_true_calibrated=0.8, verdict=None),
        dataclasses.replace(c1, status="not_check_worthy", p_true_raw=None, verdict=None)))
    s = scores.summarize(result, threshold=0.9)
    assert [(c.value, c.label) for c in s.claims] == [(0.8, "likely_false"), (None, "not_scored")]
    assert s.value == 0.8 and s.label == "likely_false"


def test_a_result_scored_without_a_threshold_gets_franqs_verdicts_at_the_adapters():
    """The default and "fast" scorers run with no threshold, so no claim has a verdict; the
    adapters apply franq's rule at their own threshold, so "uncertain" reaches them."""
    from franq.types import KnowledgeTerm

    result = fake_scorer()(Q, P, "It was built in 1889. It is made of gold.")
    c0, c1 = result.claims
    no_signal = KnowledgeTerm(0.62, base_rate=0.6, low=0.5, high=0.7)  # the passages silent, the knowledge at chance
    result = dataclasses.replace(result, claims=(
        dataclasses.replace(c0, p_true_calibrated=0.9, verdict=None),
        dataclasses.replace(c1, p_faithful=0.1, p_true_calibrated=0.62, knowledge=no_signal, verdict=None)))
    s = scores.summarize(result, threshold=0.5)
    assert [c.label for c in s.claims] == ["likely_true", "uncertain"]
    assert s.value == 0.9 and s.reason.endswith("1 uncertain claim(s) left out")
    given = dataclasses.replace(result, claims=(result.claims[0], dataclasses.replace(result.claims[1],
                                                                                      verdict="likely_true")))
    assert [c.label for c in scores.summarize(given).claims] == ["likely_true", "likely_true"]  # verdicts kept


def test_an_answer_with_no_claim_to_judge_has_no_value():
    s = scores.summarize(fake_scorer()(Q, P, "It is. Ok."))
    assert s.value is None and s.label == "uncertain" and "no claim could be judged (2 claim(s): 2 uncertain" in s.reason
    assert franq_evaluator(inputs=Q, outputs="It is.", context=P, scorer=fake_scorer())["score"] is None


def test_openevals_evaluator_reads_inputs_outputs_and_context_in_their_usual_places():
    one = franq_evaluator(inputs={"question": Q}, outputs={"answer": A}, context=P, scorer=fake_scorer())
    assert one == {"key": "franq", "score": 0.0, "comment": scores.summarize(fake_scorer()(Q, P, A)).reason}
    # context from the inputs (RAGAS-style names) or the outputs; extra keyword arguments accepted
    from_inputs = franq_evaluator(inputs={"user_input": Q, "retrieved_contexts": P}, outputs={"response": "Built 1889."},
                                  reference_outputs={"answer": "1889"}, scorer=fake_scorer())
    from_outputs = franq_evaluator(inputs={"input": Q}, outputs={"output": "Built 1889.", "documents": P},
                                   scorer=fake_scorer())
    assert from_inputs["score"] == from_outputs["score"] == 1.0
    per = make_franq_evaluator(scorer=fake_scorer(), per_claim=True)(inputs=Q, outputs=A, context=P)
    assert [(r["key"], r["score"], r["metadata"]["label"]) for r in per] == [
        ("franq", 1.0, "likely_true"), ("franq", 0.0, "likely_false"), ("franq", 0.5, "uncertain")]
    assert per[1]["comment"] == "claim #1 'It is made of gold.': likely_false"


@pytest.mark.parametrize("kwargs, message", [
    ({"inputs": {"q": Q}, "outputs": A}, "inputs: expected one of ['question', 'user_input', 'input', 'query']"),
    ({"inputs": Q, "outputs": 3}, "outputs: expected a string or a dict"),
    ({"inputs": Q, "outputs": A, "context": [None]}, "'passages[0]' must be a string"),
])
def test_openevals_bad_input_is_one_line_naming_the_field(kwargs, message):
    with pytest.raises(InputError) as err:
        franq_evaluator(**kwargs, scorer=fake_scorer())
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_franq_pipeline_is_used_through_its_score_method():
    calls = []
    pipeline = SimpleNamespace(config=object(), score=lambda q, p, a: calls.append((q, p, a)) or fake_scorer()(q, p, a))
    franq_evaluator(inputs=Q, outputs="Built.", context="one passage", scorer=pipeline)
    assert calls == [(Q, ["one passage"], "Built.")]
    with pytest.raises(InputError, match="scorer: expected a franq.Franq or a callable"):
        franq_evaluator(inputs=Q, outputs="Built.", scorer=42)


@pytest.mark.parametrize("module, call, extra", [
    ("langchain_core.runnables", lambda: __import__("franq.apps.integrations.langchain", fromlist=["x"]).franq_guard(
        scorer=fake_scorer()), "franq[langchain]"),
    ("opentelemetry.trace", lambda: __import__("franq.apps.integrations.otel", fromlist=["x"]).evaluate(
        Q, P, "Built.", scorer=fake_scorer()), "franq[otel]"),
])
def test_a_missing_framework_is_one_line_naming_the_extra(monkeypatch, module, call, extra):
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed
    with pytest.raises(ImportError) as err:
        call()
    assert f"pip install '{extra}'" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("adapter, name, module, extra", [
    ("ragas", "FranqMetric", "ragas.metrics.collections.base", "franq[ragas]"),
    ("ragas", "FranqEvalMetric", "ragas.metrics.base", "franq[ragas]"),
    ("deepeval", "FranqMetric", "deepeval.metrics", "franq[deepeval]"),
    ("llamaindex", "FranqEvaluator", "llama_index.core.evaluation", "franq[llamaindex]"),
    ("haystack", "FranqEvaluator", "haystack", "franq[haystack]"),
    ("langchain", "callback_handler", "langchain_core.callbacks", "franq[langchain]"),
])
def test_a_missing_framework_class_is_one_line_naming_the_extra(monkeypatch, adapter, name, module, extra):
    import importlib

    mod = importlib.import_module(f"franq.apps.integrations.{adapter}")
    builders = [f for f in vars(mod).values() if hasattr(f, "cache_clear")]  # classes are built once, lazily
    for f in builders:
        f.cache_clear()
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed
    try:
        with pytest.raises(ImportError) as err:
            value = getattr(mod, name)
            if name == "callback_handler":  # a function: the framework is imported when called
                value(scorer=fake_scorer())
        assert f"pip install '{extra}'" in str(err.value) and "\n" not in str(err.value)
    finally:
        for f in builders:
            f.cache_clear()


def test_a_framework_whose_own_import_fails_shows_that_error(tmp_path, monkeypatch):
    (tmp_path / "broken_framework").mkdir()
    (tmp_path / "broken_framework" / "__init__.py").write_text("import franq_no_such_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="franq_no_such_dependency"):
        scores.need("broken_framework", "x", "X")


class Doc:  # a LangChain Document's shape
    def __init__(self, page_content, metadata):
        self.page_content, self.metadata = page_content, metadata


def test_a_real_pipeline_scores_documents_through_an_adapter(tiny_lm):
    from conftest import make_franq

    pipeline = make_franq(tiny_lm)
    docs = [Doc("The Eiffel Tower was built from 1887 to 1889.", {"title": "Eiffel Tower"})]
    one = franq_evaluator(inputs=Q, outputs="It was built in 1889. It is made of gold.", context=docs, scorer=pipeline)
    direct = pipeline.score(Q, [{"title": "Eiffel Tower", "text": docs[0].page_content}],
                            "It was built in 1889. It is made of gold.")
    assert one["score"] == scores.summarize(direct).value and one["score"] is not None
    assert one["comment"].startswith("weakest claim #")


def test_a_framework_too_old_to_hold_the_module_names_the_version_found(tmp_path, monkeypatch):
    import importlib.metadata

    (tmp_path / "old_framework").mkdir()
    (tmp_path / "old_framework" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(importlib.metadata, "packages_distributions", lambda: {"old_framework": ["old-framework"]})
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "0.1.0")
    with pytest.raises(ImportError) as err:
        scores.need("old_framework.metrics", "old", "Old")
    assert str(err.value) == ("franq's Old adapter needs old_framework (old-framework 0.1.0 installed, without "
                              "old_framework.metrics): pip install 'franq[old]'")
