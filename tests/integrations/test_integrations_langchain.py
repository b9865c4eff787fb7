"""The LangChain guard and callback handler against the real langchain-core: in a chain, with
Documents, batched, async; the chat model is langchain-core's fake (no LLM call)."""
from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("langchain_core")
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough

from franq import InputError
from franq.apps.integrations.langchain import callback_handler, franq_guard
from franq.apps.integrations.testing import fake_scorer
from adapter_recording import RecordingScorer

Q = "When was the Eiffel Tower built?"
DOCS = [Document(page_content="The Eiffel Tower was built from 1887 to 1889 in Paris.",
                 metadata={"title": "Eiffel Tower", "source": "wiki"})]


def test_the_guard_is_a_runnable_that_attaches_scores_and_flags():
    guard = franq_guard(scorer=fake_scorer())
    assert isinstance(guard, Runnable) and guard.name == "franq_guard"
    ok = guard.invoke({"question": Q, "answer": "It was built in 1889.", "documents": DOCS})
    bad = guard.invoke({"question": Q, "answer": "It was built in 1889. It is made of gold.", "context": DOCS})
    assert ok["flagged"] is False and ok["franq"]["score"] == 1.0 and ok["documents"] is DOCS
    assert bad["flagged"] is True and bad["franq"]["score"] == 0.0
    assert bad["franq"]["claims"] == [
        {"index": 0, "text": "It was built in 1889.", "p_true": 1.0, "label": "likely_true"},
        {"index": 1, "text": "It is made of gold.", "p_true": 0.0, "label": "likely_false"}]
    assert "weakest claim #1 'It is made of gold.'" in bad["franq"]["reason"]


def test_in_a_chain_batched_with_a_string_context_and_ragas_names():
    scorer = RecordingScorer()  # any callable is a scorer
    chain = RunnableLambda(lambda x: {**x, "answer": "It was built in 1889."}) | franq_guard(scorer=scorer)
    outs = chain.batch([{"question": Q, "context": "Built in 1889."},
                        {"user_input": Q, "retrieved_contexts": ["Nothing relevant."]}])
    assert [o["flagged"] for o in outs] == [False, True]
    assert sorted(map(str, scorer.seen)) == sorted([str(["Built in 1889."]), str(["Nothing relevant."])])


def test_all_uncertain_is_flagged_and_bad_input_is_one_line():
    out = franq_guard(scorer=fake_scorer()).invoke({"question": Q, "answer": "It is.", "context": []})
    assert out["flagged"] is True and out["franq"]["score"] is None and out["franq"]["label"] == "uncertain"
    with pytest.raises(InputError, match=r"franq guard input: expected one of \['answer'"):
        franq_guard(scorer=fake_scorer()).invoke({"question": Q, "context": []})


class FixedRetriever(BaseRetriever):
    def _get_relevant_documents(self, query, *, run_manager=None):
        return DOCS


def rag_chain(answer: str):
    """The usual LCEL RAG chain: retriever and question into a prompt, a (fake) chat model, a parser."""
    prompt = ChatPromptTemplate.from_template("Context: {context}\nQuestion: {question}")
    return ({"context": FixedRetriever(), "question": RunnablePassthrough()} | prompt
            | FakeListChatModel(responses=[answer]) | StrOutputParser())


def test_the_callback_scores_each_run_with_its_retrieved_documents_without_changing_it():
    scorer, results = RecordingScorer(), []
    handler = callback_handler(scorer=scorer, on_result=results.append)
    chain = rag_chain("It was built in 1889. It is made of gold.")
    assert chain.invoke(Q, config={"callbacks": [handler]}) == "It was built in 1889. It is made of gold."
    assert asyncio.run(chain.ainvoke(Q, config={"callbacks": [handler]})).endswith("gold.")
    chain.batch([Q, Q], config={"callbacks": [handler]})
    assert len(handler.results) == 4 and results == handler.results and handler.skipped == 0
    assert all(p == DOCS for p in scorer.seen)  # the retriever's documents, not the prompt's text
    first = handler.results[0]
    assert (first["question"], first["flagged"], first["franq"]["score"]) == (Q, True, 0.0)
    assert "weakest claim #1 'It is made of gold.'" in first["franq"]["reason"]
    assert len({r["run_id"] for r in handler.results}) == 4


def test_the_callback_reads_dict_inputs_and_outputs_and_skips_what_has_no_answer():
    handler = callback_handler(scorer=fake_scorer())
    answer_step = RunnableLambda(lambda x: {"answer": "It was built in 1889.", "documents": DOCS})
    answer_step.invoke({"question": Q}, config={"callbacks": [handler]})
    RunnableLambda(lambda x: 42).invoke({"question": Q}, config={"callbacks": [handler]})
    assert [r["flagged"] for r in handler.results] == [False] and handler.skipped == 1
    with pytest.raises(ZeroDivisionError):  # a failed run is forgotten, not scored
        RunnableLambda(lambda x: 1 / 0).invoke({"question": Q}, config={"callbacks": [handler]})
    assert len(handler.results) == 1 and not handler._runs


class EchoRetriever(BaseRetriever):
    def _get_relevant_documents(self, query, *, run_manager=None):
        return [Document(page_content=f"About {query}.", metadata={})]


def test_an_async_batch_keeps_each_runs_documents_and_scores_one_at_a_time():
    scorer = RecordingScorer(pause=0.005)
    chain = ({"context": EchoRetriever(), "question": RunnablePassthrough()}
             | RunnableLambda(lambda x: f"An answer about {x['question']}."))
    handler = callback_handler(scorer=scorer)
    questions = [f"topic {i}" for i in range(12)]
    # abatch runs a sync handler's callbacks in several threads at once
    asyncio.run(chain.abatch(questions, config={"callbacks": [handler], "max_concurrency": 6}))
    pairs = [(q, [p.page_content for p in passages]) for q, passages, _ in scorer.calls]
    assert sorted(pairs) == sorted((q, [f"About {q}."]) for q in questions)
    assert scorer.most == 1 and len(handler.results) == 12 and not handler._runs and not handler._root


def test_the_guard_scores_an_async_batch_one_answer_at_a_time():
    scorer = RecordingScorer(pause=0.005)
    guard = franq_guard(scorer=scorer)
    outs = asyncio.run(guard.abatch([{"question": Q, "answer": "It was built in 1889.", "context": DOCS}] * 8,
                                    config={"max_concurrency": 4}))
    assert scorer.most == 1 and [o["flagged"] for o in outs] == [False] * 8
