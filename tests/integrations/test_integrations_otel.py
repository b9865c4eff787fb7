"""The OpenTelemetry adapter against the real SDK: the events it leaves on a span, offline."""
from __future__ import annotations

import pytest

pytest.importorskip("opentelemetry.sdk")
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from franq.apps.integrations.otel import EVENT, add_events, evaluate
from franq.apps.integrations.testing import fake_scorer

Q = "When was the Eiffel Tower built?"
P = [{"title": "Eiffel Tower", "text": "The Eiffel Tower was built from 1887 to 1889 in Paris."}]


@pytest.fixture
def tracer():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("test"), exporter


def test_one_event_per_claim_and_one_per_answer_with_the_genai_names(tracer):
    tr, exporter = tracer
    with tr.start_as_current_span("rag"):
        result = evaluate(Q, P, "It was built in 1889. It is made of gold. It is.", scorer=fake_scorer(),
                          response_id="r-1")
    [span] = exporter.get_finished_spans()
    events = [dict(e.attributes) for e in span.events]
    assert [e.name for e in span.events] == [EVENT] * 4 and len(result.claims) == 3
    first, gold, unsure, answer = events
    assert first == {"gen_ai.evaluation.name": "franq", "gen_ai.response.id": "r-1",
                     "gen_ai.evaluation.score.value": 1.0, "gen_ai.evaluation.score.label": "likely_true",
                     "gen_ai.evaluation.explanation": "claim #0: P(true) = 1.00 (likely_true)",
                     "franq.claim.text": "It was built in 1889.", "franq.claim.index": 0}
    assert gold["gen_ai.evaluation.score.label"] == "likely_false" and gold["franq.claim.index"] == 1
    # an uncertain claim: labelled so, its own P(true) kept, left out of the answer's value
    assert unsure["gen_ai.evaluation.score.label"] == "uncertain" and unsure["gen_ai.evaluation.score.value"] == 0.5
    assert answer["gen_ai.evaluation.score.value"] == 0.0 and answer["gen_ai.evaluation.score.label"] == "likely_false"
    assert "'It is made of gold.'" in answer["gen_ai.evaluation.explanation"]
    assert "1 uncertain claim(s) left out" in answer["gen_ai.evaluation.explanation"]
    assert "franq.claim.text" not in answer


def test_events_go_on_a_given_span_and_an_all_uncertain_answer_has_no_value(tracer):
    tr, exporter = tracer
    result = fake_scorer()(Q, P, "It is.")
    live = tr.start_span("live")  # not the current span
    with tr.start_as_current_span("outer"):
        events = add_events(result, span=live, threshold=0.9)
    live.end()
    assert events[-1]["gen_ai.evaluation.score.label"] == "uncertain"
    assert "gen_ai.evaluation.score.value" not in events[-1] and "gen_ai.response.id" not in events[-1]
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert len(spans["live"].events) == 2 and not spans["outer"].events  # the given span, not the current one


def test_without_a_span_the_current_one_is_used_and_a_non_recording_one_is_harmless():
    result = evaluate(Q, P, "It was built in 1889.", scorer=fake_scorer())  # no span open: a no-op span
    assert result.claims[0].p_true_raw == 1.0
    assert not trace.get_current_span().is_recording()
