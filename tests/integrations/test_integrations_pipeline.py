"""A real franq.Franq (the tiny test model) through each framework's adapter: the value each
framework reports is the pipeline's own weakest-claim P(true) for the same passages, read
from that framework's document type (titles included)."""
from __future__ import annotations

import asyncio
import importlib.util
import math
import os

import pytest
from conftest import make_franq

from franq.apps.integrations.scores import summarize

for _name, _value in {"RAGAS_DO_NOT_TRACK": "true", "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
                      "HAYSTACK_TELEMETRY_ENABLED": "False"}.items():
    os.environ.setdefault(_name, _value)  # offline: no usage reports

Q = "When was the Eiffel Tower built?"
TEXT = "The Eiffel Tower was built from 1887 to 1889."
A = "It was built in 1889. It is made of gold."


def ragas_value(pipeline):
    pytest.importorskip("ragas")
    from franq.apps.integrations.ragas import FranqMetric

    return FranqMetric(scorer=pipeline).score(user_input=Q, response=A, retrieved_contexts=[{"title": "Eiffel Tower",
                                                                                               "text": TEXT}]).value


def deepeval_value(pipeline):
    pytest.importorskip("deepeval")
    from deepeval.test_case import LLMTestCase
    from deepeval.test_case.llm_test_case import RetrievedContextData

    from franq.apps.integrations.deepeval import FranqMetric

    case = LLMTestCase(input=Q, actual_output=A,
                       retrieval_context=[RetrievedContextData(context=TEXT, source="Eiffel Tower")])
    return FranqMetric(scorer=pipeline).measure(case)


def llamaindex_value(pipeline):
    pytest.importorskip("llama_index.core")
    from llama_index.core.base.response.schema import Response
    from llama_index.core.schema import NodeWithScore, TextNode

    from franq.apps.integrations.llamaindex import FranqEvaluator

    node = NodeWithScore(node=TextNode(text=TEXT, metadata={"title": "Eiffel Tower"}), score=1.0)
    return FranqEvaluator(scorer=pipeline).evaluate_response(query=Q, response=Response(A, source_nodes=[node])).score


def haystack_value(pipeline):
    pytest.importorskip("haystack")
    from haystack import Document

    from franq.apps.integrations.haystack import FranqEvaluator

    docs = [Document(content=TEXT, meta={"title": "Eiffel Tower"})]
    return FranqEvaluator(scorer=pipeline).run(questions=[Q], contexts=[docs], predicted_answers=[A])["score"]


def langchain_value(pipeline):
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnableLambda

    from franq.apps.integrations.langchain import callback_handler

    class Retriever(BaseRetriever):
        def _get_relevant_documents(self, query, *, run_manager=None):
            return [Document(page_content=TEXT, metadata={"title": "Eiffel Tower"})]

    handler = callback_handler(scorer=pipeline)
    chain = RunnableLambda(lambda q: {"question": q, "docs": Retriever().invoke(q)}) | RunnableLambda(lambda x: A)
    asyncio.run(chain.ainvoke(Q, config={"callbacks": [handler]}))
    return handler.results[0]["franq"]["score"]


@pytest.fixture(scope="module")
def pipeline_and_expected(tiny_lm):
    pipeline = make_franq(tiny_lm)
    expected = summarize(pipeline.score(Q, [{"title": "Eiffel Tower", "text": TEXT}], A)).value
    assert expected is not None and 0.0 <= expected <= 1.0
    return pipeline, expected


def needs(value_of, package):
    """A case skipped before its fixture builds the model when ``package`` is not installed."""
    return pytest.param(value_of, id=package, marks=pytest.mark.skipif(
        importlib.util.find_spec(package) is None, reason=f"{package} is not installed"))


@pytest.mark.parametrize("value_of", [needs(ragas_value, "ragas"), needs(deepeval_value, "deepeval"),
                                      needs(llamaindex_value, "llama_index"), needs(haystack_value, "haystack"),
                                      needs(langchain_value, "langchain_core")])
def test_each_framework_reports_the_pipelines_own_value(value_of, pipeline_and_expected):
    pipeline, expected = pipeline_and_expected
    value = value_of(pipeline)
    assert math.isclose(value, expected, rel_tol=1e-9)  # a passage without its title scores ~1e-6 apart
