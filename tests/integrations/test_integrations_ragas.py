"""The RAGAS metric against the real ragas: its current metric API (ascore / score /
batch_score) and ragas.evaluate(); offline, no LLM, no embeddings."""
from __future__ import annotations

import asyncio
import math
import os

import pytest

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # offline: no usage report
pytest.importorskip("ragas")
from ragas import EvaluationDataset, evaluate
from ragas.metrics.base import SingleTurnMetric
from ragas.metrics.collections.base import BaseMetric
from ragas.metrics.result import MetricResult

from franq import InputError
from franq.apps.integrations.ragas import FranqEvalMetric, FranqMetric
from franq.apps.integrations.testing import fake_scorer

Q = "When was the Eiffel Tower built?"
P = ["The Eiffel Tower was built from 1887 to 1889 in Paris."]
A = "It was built in 1889. It is made of gold. It is."


def test_ascore_gives_the_weakest_claim_its_reason_and_the_claims_in_traces():
    metric = FranqMetric(scorer=fake_scorer())
    assert isinstance(metric, BaseMetric) and metric.name == "franq"
    result = asyncio.run(metric.ascore(user_input=Q, response=A, retrieved_contexts=P))
    assert isinstance(result, MetricResult) and result.value == 0.0
    assert result.reason == ("weakest claim #1 'It is made of gold.': P(true) = 0.00 (likely_false); "
                             "1 uncertain claim(s) left out")
    claims = [(c["p_true"], c["label"]) for c in result.traces["output"]["claims"]]
    assert claims == [(1.0, "likely_true"), (0.0, "likely_false"), (0.5, "uncertain")]


def test_sync_and_batch_scoring_and_an_all_uncertain_answer_is_nan():
    metric = FranqMetric(scorer=fake_scorer())
    one = metric.score(user_input=Q, response="It was built in 1889.", retrieved_contexts=P)
    batch = metric.batch_score([{"user_input": Q, "response": "It was built in 1889.", "retrieved_contexts": P},
                                {"user_input": Q, "response": "It is.", "retrieved_contexts": P}])
    assert one.value == batch[0].value == 1.0
    assert math.isnan(batch[1].value) and batch[1].reason.startswith("no claim could be judged")
    closed_book = metric.score(user_input=Q, response="It was built in 1889.")  # no retrieved_contexts
    assert closed_book.value == 0.0


@pytest.mark.filterwarnings(r"ignore:a?evaluate\(\) is deprecated:DeprecationWarning")  # ragas 0.4's own notice
def test_evaluate_runs_the_legacy_metric_over_a_dataset_with_nan_for_no_value():
    metric = FranqEvalMetric(scorer=fake_scorer())
    assert isinstance(metric, SingleTurnMetric)
    data = EvaluationDataset.from_list([
        {"user_input": Q, "response": "It was built in 1889. It is made of gold.", "retrieved_contexts": P},
        {"user_input": Q, "response": "It was built in 1889.", "retrieved_contexts": P},
        {"user_input": Q, "response": "It is.", "retrieved_contexts": P}])
    frame = evaluate(data, metrics=[metric], show_progress=False, raise_exceptions=True).to_pandas()
    assert frame["franq"].tolist()[:2] == [0.0, 1.0] and math.isnan(frame["franq"].tolist()[2])


def test_bad_input_is_one_line_naming_the_field():
    with pytest.raises(InputError, match=r"'passages\[0\]' must be a string") as err:
        FranqMetric(scorer=fake_scorer()).score(user_input=Q, response="Built.", retrieved_contexts=[None])
    assert "\n" not in str(err.value)
