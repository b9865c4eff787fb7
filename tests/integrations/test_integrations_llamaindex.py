"""The LlamaIndex evaluator against the real llama-index-core: aevaluate / evaluate,
evaluate_response on a Response with source nodes, BatchEvalRunner; offline, no LLM."""
from __future__ import annotations

import asyncio
import pickle

import pytest

pytest.importorskip("llama_index.core")
from llama_index.core.base.response.schema import Response
from llama_index.core.evaluation import BaseEvaluator, BatchEvalRunner, EvaluationResult
from llama_index.core.schema import NodeWithScore, TextNode

from franq import InputError
from franq.apps.integrations.llamaindex import FranqEvaluator
from franq.apps.integrations.testing import fake_scorer
from adapter_recording import RecordingScorer

Q = "When was the Eiffel Tower built?"
P = ["The Eiffel Tower was built from 1887 to 1889 in Paris."]


def test_aevaluate_returns_an_evaluation_result_with_the_claims():
    evaluator = FranqEvaluator(scorer=fake_scorer())
    assert isinstance(evaluator, BaseEvaluator) and evaluator.get_prompts() == {}
    result = asyncio.run(evaluator.aevaluate(query=Q, response="It was built in 1889. It is made of gold. It is.",
                                             contexts=P))
    assert isinstance(result, EvaluationResult)
    assert (result.score, result.passing, result.label, result.contexts) == (0.0, False, "likely_false", P)
    assert result.feedback.startswith("weakest claim #1 'It is made of gold.'")
    assert [c["label"] for c in result.claims] == ["likely_true", "likely_false", "uncertain"]
    assert evaluator.evaluate(query=Q, response="It was built in 1889.", contexts=P).passing is True


def test_evaluate_response_passes_the_source_nodes_with_their_metadata():
    scorer = RecordingScorer()
    node = NodeWithScore(node=TextNode(text=P[0], metadata={"title": "Eiffel Tower"}), score=0.9)
    response = Response(response="It was built in 1889.", source_nodes=[node])
    result = FranqEvaluator(scorer=scorer).evaluate_response(query=Q, response=response)
    again = asyncio.run(FranqEvaluator(scorer=scorer).aevaluate_response(query=Q, response=response))
    assert scorer.seen == [[node], [node]] and result.score == again.score == 1.0 and result.contexts == P
    with pytest.raises(InputError, match="'response' must be a Response with source_nodes"):
        FranqEvaluator(scorer=scorer).evaluate_response(query=Q, response="a string")


@pytest.mark.filterwarnings("ignore:asyncio_module:DeprecationWarning")  # llama-index-core's own runner
def test_batch_runner_and_an_all_uncertain_answer_is_not_decided():
    runner = BatchEvalRunner({"franq": FranqEvaluator(scorer=fake_scorer())}, workers=2)
    out = asyncio.run(runner.aevaluate_response_strs(queries=[Q, Q], response_strs=["It was built in 1889.", "It is."],
                                                     contexts_list=[P, P]))
    assert [(r.score, r.passing, r.label) for r in out["franq"]] == [(1.0, True, "likely_true"),
                                                                     (None, None, "uncertain")]
    with pytest.raises(InputError, match="'query' and 'response' are required"):
        FranqEvaluator(scorer=fake_scorer()).evaluate(query=Q, contexts=P)


def test_a_result_pickles_and_the_classes_are_importable_by_name():
    result = FranqEvaluator(scorer=fake_scorer()).evaluate(query=Q, response="It was built in 1889.", contexts=P)
    assert pickle.loads(pickle.dumps(result)) == result  # kept as any EvaluationResult is
    assert repr(FranqEvaluator) == "<class 'franq.apps.integrations.llamaindex.FranqEvaluator'>"
