"""The DeepEval metric against the real deepeval: measure / a_measure on LLMTestCases and
deepeval.evaluate(); offline, no LLM judge."""
from __future__ import annotations

import asyncio
import os

import pytest

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")  # offline: no usage report
pytest.importorskip("deepeval")
from deepeval import assert_test, evaluate
from deepeval.evaluate.configs import DisplayConfig
from deepeval.metrics import BaseMetric
from deepeval.test_case import LLMTestCase
from deepeval.test_case.llm_test_case import RetrievedContextData

from franq import InputError
from franq.apps.integrations.deepeval import FranqMetric
from franq.apps.integrations.testing import fake_scorer
from adapter_recording import RecordingScorer

Q = "When was the Eiffel Tower built?"
P = ["The Eiffel Tower was built from 1887 to 1889 in Paris."]


def test_measure_sets_score_reason_success_and_the_claims():
    metric = FranqMetric(scorer=fake_scorer())
    assert isinstance(metric, BaseMetric) and metric.__name__ == "franq"
    case = LLMTestCase(input=Q, actual_output="It was built in 1889. It is made of gold. It is.", retrieval_context=P)
    assert metric.measure(case) == 0.0 and metric.score == 0.0
    assert metric.reason == ("weakest claim #1 'It is made of gold.': P(true) = 0.00 (likely_false); "
                             "1 uncertain claim(s) left out")
    assert metric.success is False and metric.is_successful() is False
    assert metric.score_breakdown["label"] == "likely_false"
    assert [c["label"] for c in metric.score_breakdown["claims"]] == ["likely_true", "likely_false", "uncertain"]


def test_a_measure_reads_retrieved_context_data_with_its_source_as_title():
    scorer = RecordingScorer()
    case = LLMTestCase(input=Q, actual_output="It was built in 1889.",
                       retrieval_context=[RetrievedContextData(context=P[0], source="Eiffel Tower"), "Paris."])
    metric = FranqMetric(scorer=scorer, threshold=0.9)
    assert asyncio.run(metric.a_measure(case)) == 1.0 and metric.is_successful()
    assert scorer.seen == [[{"title": "Eiffel Tower", "text": P[0]}, "Paris."]]


def test_nothing_to_judge_is_no_score_and_not_a_success_and_no_output_is_one_line():
    metric = FranqMetric(scorer=fake_scorer())
    assert metric.measure(LLMTestCase(input=Q, actual_output="It is.")) is None  # closed book, all uncertain
    assert metric.score is None and metric.is_successful() is False
    assert metric.reason.startswith("no claim could be judged")
    with pytest.raises(InputError, match="the test case has no 'actual_output'"):
        metric.measure(LLMTestCase(input=Q))


def test_deepeval_evaluate_runs_the_metric_offline(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # deepeval keeps its test-run cache in ./.deepeval
    cases = [LLMTestCase(input=Q, actual_output="It was built in 1889. It is made of gold.", retrieval_context=P),
             LLMTestCase(input=Q, actual_output="It was built in 1889.", retrieval_context=P)]
    result = evaluate(test_cases=cases, metrics=[FranqMetric(scorer=fake_scorer())],
                      display_config=DisplayConfig(print_results=False, show_indicator=False))
    data = [t.metrics_data[0] for t in result.test_results]
    assert sorted((d.name, d.score, d.success) for d in data) == [("franq", 0.0, False), ("franq", 1.0, True)]
    assert any("'It is made of gold.'" in d.reason for d in data)


def test_assert_test_passes_a_supported_answer_and_fails_naming_the_weakest_claim(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    metric = FranqMetric(scorer=fake_scorer())
    assert_test(LLMTestCase(input=Q, actual_output="It was built in 1889.", retrieval_context=P), [metric])
    with pytest.raises(AssertionError, match=r"franq \(score: 0.0.*weakest claim #0 'It is made of gold.'"):
        assert_test(LLMTestCase(input=Q, actual_output="It is made of gold.", retrieval_context=P), [metric])
