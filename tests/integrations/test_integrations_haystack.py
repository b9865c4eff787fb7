"""The Haystack component against the real haystack-ai: run() alone and inside a Pipeline,
with Documents; offline, no LLM."""
from __future__ import annotations

import asyncio
import os

import pytest

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # offline: no usage report
pytest.importorskip("haystack")
from haystack import Document, Pipeline

from franq import InputError
from franq.apps.integrations.haystack import FranqEvaluator
from franq.apps.integrations.testing import fake_scorer
from adapter_recording import RecordingScorer

Q = "When was the Eiffel Tower built?"
P = "The Eiffel Tower was built from 1887 to 1889 in Paris."


def test_run_gives_individual_and_mean_scores_and_per_claim_results():
    out = FranqEvaluator(scorer=fake_scorer()).run(
        questions=[Q, Q], contexts=[[P], [P]],
        predicted_answers=["It was built in 1889. It is made of gold. It is.", "It was built in 1889."])
    assert out["individual_scores"] == [0.0, 1.0] and out["score"] == 0.5
    first = out["results"][0]
    assert first["statements"] == ["It was built in 1889.", "It is made of gold.", "It is."]
    assert first["statement_scores"] == [1.0, 0.0, 0.5] and first["label"] == "likely_false"
    assert [c["label"] for c in first["claims"]] == ["likely_true", "likely_false", "uncertain"]
    assert first["reason"].startswith("weakest claim #1 'It is made of gold.'")


def test_in_a_pipeline_with_documents_and_an_all_uncertain_answer_left_out_of_the_mean():
    scorer = RecordingScorer()
    docs = [Document(content=P, meta={"title": "Eiffel Tower"})]
    pipeline = Pipeline()
    pipeline.add_component("franq", FranqEvaluator(scorer=scorer))
    out = pipeline.run({"franq": {"questions": [Q, Q], "contexts": [docs, docs],
                                  "predicted_answers": ["It was built in 1889.", "It is."]}})["franq"]
    assert out["individual_scores"] == [1.0, None] and out["score"] == 1.0
    assert out["results"][1]["label"] == "uncertain" and scorer.seen[0] == docs


def test_inputs_of_different_lengths_are_one_line():
    with pytest.raises(InputError, match=r"the inputs differ in length \({'questions': 2, 'contexts': 1"):
        FranqEvaluator(scorer=fake_scorer()).run(questions=[Q, Q], contexts=[[P]], predicted_answers=["a", "b"])


def test_concurrent_async_runs_of_a_pipeline_score_one_at_a_time():
    scorer = RecordingScorer(pause=0.005)
    pipeline = Pipeline()
    pipeline.add_component("franq", FranqEvaluator(scorer=scorer))
    data = {"franq": {"questions": [Q] * 3, "contexts": [[P]] * 3, "predicted_answers": ["It was built in 1889."] * 3}}

    async def runs():
        return await asyncio.gather(*(pipeline.run_async(data) for _ in range(4)))
    outs = asyncio.run(runs())
    assert scorer.most == 1 and [o["franq"]["score"] for o in outs] == [1.0] * 4
