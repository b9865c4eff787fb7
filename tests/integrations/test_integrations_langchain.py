"""The LangChain guard against the real langchain-core: in a chain, with Documents, batched."""
from __future__ import annotations

import pytest

pytest.importorskip("langchain_core")
from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableLambda

from franq import InputError
from franq.apps.integrations.langchain import franq_guard
from franq.apps.integrations.testing import fake_scorer

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
    seen = []

    def scorer(question, passages, answer):  # any callable is a scorer
        seen.append(passages)
        return fake_scorer()(question, passages, answer)
    chain = RunnableLambda(lambda x: {**x, "answer": "It was built in 1889."}) | franq_guard(scorer=scorer)
    outs = chain.batch([{"question": Q, "context": "Built in 1889."},
                        {"user_input": Q, "retrieved_contexts": ["Nothing relevant."]}])
    assert [o["flagged"] for o in outs] == [False, True]
    assert sorted(map(str, seen)) == sorted([str(["Built in 1889."]), str(["Nothing relevant."])])


def test_all_uncertain_is_flagged_and_bad_input_is_one_line():
    out = franq_guard(scorer=fake_scorer()).invoke({"question": Q, "answer": "It is.", "context": []})
    assert out["flagged"] is True and out["franq"]["score"] is None and out["franq"]["label"] == "uncertain"
    with pytest.raises(InputError, match=r"franq guard input: expected one of \['answer'"):
        franq_guard(scorer=fake_scorer()).invoke({"question": Q, "context": []})
