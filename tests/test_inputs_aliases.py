"""Inputs as RAG systems write them (issue 46.2): RAGAS field names, a ``contexts`` key,
LangChain / LlamaIndex / Haystack documents (objects and dict forms), unknown fields kept
in ``meta`` with one notice per batch, and ``strict`` keeping the old refusal; through the
API (franq.io), the JSONL batch reader and the service (a fake pipeline: no model)."""
from __future__ import annotations

import io
import json
import logging
from types import SimpleNamespace

import httpx
import pytest
from servers import serve_in_thread

from franq import FranqConfig
from franq.apps.integrations.testing import fake_scorer
from franq.errors import InputError
from franq.io import as_examples, parse_example, parse_passages
from franq.runners.records import BadRecord, RecordReader
from franq.types import Passage

Q, A = "When was the tower built?", "It was built in 1889."


class LangChainDocument:  # the shapes of the frameworks' documents, duck-typed as franq reads them
    def __init__(self, page_content, metadata=None):
        self.page_content, self.metadata = page_content, metadata or {}


class HaystackDocument:
    def __init__(self, content, meta=None):
        self.content, self.meta, self.id = content, meta or {}, "h1"


class LlamaIndexNode:
    def __init__(self, text, metadata=None):
        self.text, self.metadata = text, metadata or {}

    def get_content(self):
        return self.text


class TextOnlyNode:
    def __init__(self, text, metadata):
        self.text, self.metadata = text, metadata


def test_ragas_names_and_contexts_key_are_read_as_franqs():
    ragas = parse_example({"user_input": Q, "response": A, "retrieved_contexts": ["Built 1887-1889."]})
    assert (ragas.question, ragas.answer, ragas.passages) == (Q, A, (Passage("Built 1887-1889."),))
    assert ragas.meta is None
    ctx = parse_example({"question": Q, "answer": A, "contexts": ["c"]})
    assert ctx.passages == (Passage("c"),)


@pytest.mark.parametrize("record, both", [
    ({"question": Q, "user_input": Q, "answer": A, "passages": []}, ("user_input", "question")),
    ({"question": Q, "answer": A, "response": A, "passages": []}, ("response", "answer")),
    ({"question": Q, "answer": A, "passages": [], "contexts": []}, ("contexts", "passages")),
    ({"question": Q, "answer": A, "retrieved_contexts": [], "contexts": []}, ("contexts", "retrieved_contexts")),
])
def test_an_alias_with_its_name_is_one_line_naming_both(record, both):
    with pytest.raises(InputError) as err:
        parse_example(record, "line 4")
    msg = str(err.value)
    assert msg.startswith("line 4: ") and "\n" not in msg and all(f"'{n}'" in msg for n in both)


@pytest.mark.parametrize("record", [
    {"query": Q, "answer": A, "documents": [{"content": "Built 1887-1889.", "meta": {"title": "T"}}]},  # Haystack
    {"input": Q, "actual_output": A, "retrieval_context": ["Built 1887-1889."]},  # DeepEval's test case
    {"query": Q, "output": A, "context": ["Built 1887-1889."]},
])
def test_other_frameworks_names_are_read_where_franqs_own_are_missing(record):
    ex = parse_example(record)
    assert (ex.question, ex.answer, [p.text for p in ex.passages]) == (Q, A, ["Built 1887-1889."])
    assert ex.meta is None


def test_a_fallback_name_beside_franqs_own_is_kept_as_an_unknown_field_not_refused():
    # a RAG log's rewritten retrieval query beside the user's question
    ex = parse_example({"question": Q, "query": "tower construction date", "answer": A, "passages": ["p"],
                        "documents": ["other"]})
    assert (ex.question, [p.text for p in ex.passages]) == (Q, ["p"])
    assert ex.meta == {"unknown_fields": {"documents": ["other"], "query": "tower construction date"}}
    first = parse_example({"input": "from input", "query": "from query", "answer": A, "passages": []})
    assert first.question == "from input" and first.meta == {"unknown_fields": {"query": "from query"}}


def test_a_missing_field_names_the_other_names_it_is_read_from():
    with pytest.raises(InputError, match=r"missing field 'question' \(or 'user_input', 'input', 'query'\)"):
        parse_example({"answer": A, "passages": []})


def test_document_objects_of_each_framework_are_passages_titled_from_metadata():
    docs = [LangChainDocument("Built 1887-1889.", {"title": "Eiffel Tower", "source": "wiki"}),
            HaystackDocument("Made of iron.", {"title": "Materials"}),
            LlamaIndexNode("In Paris.", {"file_name": "paris.txt"}),
            TextOnlyNode("Tall.", {"title": 5}),  # a title that is not a string is not a title
            Passage("Own.", "T"), "plain", {"title": "D", "text": "dict"}]
    assert parse_passages(docs) == (Passage("Built 1887-1889.", "Eiffel Tower"), Passage("Made of iron.", "Materials"),
                                    Passage("In Paris."), Passage("Tall."), Passage("Own.", "T"), Passage("plain"),
                                    Passage("dict", "D"))
    ex = parse_example({"question": Q, "answer": A, "passages": docs})
    assert ex.meta == {"passage_metadata": {"0": {"source": "wiki"}, "2": {"file_name": "paris.txt"},
                                            "3": {"title": 5}}}


def test_document_dict_forms_as_jsonl_and_services_write_them():
    ex = parse_example({"question": Q, "answer": A, "passages": [
        {"page_content": "lc", "metadata": {"title": "L"}}, {"content": "hs", "meta": {"title": "H", "score": 0.9}},
        {"text": "li", "metadata": {}}, {"page_content": "bare"}]})
    assert ex.passages == (Passage("lc", "L"), Passage("hs", "H"), Passage("li"), Passage("bare"))
    assert ex.meta == {"passage_metadata": {"1": {"score": 0.9}}}


@pytest.mark.parametrize("passage, message", [
    (HaystackDocument(None), "'passages[0].text' must be a string, got NoneType"),
    ({"page_content": ""}, "'passages[0].text' is empty"),
    (LangChainDocument(3), "'passages[0].text' must be a string, got int"),
    (object(), "'passages[0]' must be a string or a {'title', 'text'} object or a document"),
])
def test_a_bad_document_names_the_field(passage, message):
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]").replace("{", r"\{")
                       .replace("}", r"\}")):
        parse_passages([passage])


def test_unknown_fields_are_kept_in_meta_with_one_notice_per_batch(caplog):
    rows = [{"question": Q, "answer": A, "passages": ["p"], "latency_ms": i, "meta": {"user": "ann"}}
            for i in range(3)]
    with caplog.at_level(logging.WARNING, logger="franq.io"):
        examples = as_examples(rows)
    assert [ex.meta for ex in examples] == [{"user": "ann", "unknown_fields": {"latency_ms": i}} for i in range(3)]
    notices = [r.getMessage() for r in caplog.records]
    assert len(notices) == 1 and "['latency_ms']" in notices[0] and "meta['unknown_fields']" in notices[0]


def test_strict_keeps_the_refusal_of_unknown_fields_and_passage_keys():
    with pytest.raises(InputError, match=r"examples\[0\]: unknown field\(s\) \['latency_ms'\]"):
        as_examples([{"question": Q, "answer": A, "passages": ["p"], "latency_ms": 1}], strict=True)
    with pytest.raises(InputError, match=r"'passages\[0\]' has unknown keys \['url'\]"):
        parse_example({"question": Q, "answer": A, "passages": [{"text": "x", "url": "u"}]}, strict=True)
    kept = parse_example({"question": Q, "answer": A, "passages": [{"text": "x", "url": "u"}]})
    assert kept.passages == (Passage("x"),) and kept.meta == {"passage_metadata": {"0": {"url": "u"}}}
    # aliases and documents are franq's own names: accepted in strict mode too
    ragas = parse_example({"user_input": Q, "response": A, "retrieved_contexts": [LangChainDocument("d")]}, strict=True)
    assert ragas.passages == (Passage("d"),)
    assert FranqConfig.from_dict({"batch": {"strict": True}}).batch.strict is True


def _read(lines, **kw):
    reader = RecordReader(**kw)
    return list(reader.read(io.BytesIO("".join(json.dumps(x) + "\n" for x in lines).encode())))


def test_the_batch_reader_reads_aliases_documents_and_keeps_unknown_fields(caplog):
    lines = [{"id": "a", "user_input": Q, "response": A, "retrieved_contexts": [{"page_content": "d",
                                                                                  "metadata": {"title": "T"}}]},
             {"id": "b", "question": Q, "answer": A, "contexts": ["c"], "trace_id": "t-1"},
             {"id": "c", "question": Q, "answer": A, "contexts": ["c"], "trace_id": "t-2"},
             {"id": "d", "question": Q, "user_input": Q, "answer": A, "passages": []}]
    with caplog.at_level(logging.WARNING, logger="franq.io"):
        out = _read(lines)
    a, b, c, bad = out
    assert a.example.passages == (Passage("d", "T"),) and a.example.question == Q
    assert b.example.meta == {"unknown_fields": {"trace_id": "t-1"}} and c.example.meta["unknown_fields"]["trace_id"] == "t-2"
    assert isinstance(bad, BadRecord) and "'user_input' and 'question' both given" in bad.reason and bad.line == 4
    assert sum("trace_id" in r.getMessage() for r in caplog.records) == 1
    strict = _read(lines[1:2], strict=True)
    assert isinstance(strict[0], BadRecord) and "unknown field(s) ['trace_id']" in strict[0].reason


class FakePipeline:
    """What the service reads of a pipeline, scoring with the fake scorer: no model."""

    def __init__(self, strict=False):
        self.config = FranqConfig.from_dict({"batch": {"strict": strict}})
        self.lm = SimpleNamespace(name="fake", model=None)
        self.components = {}
        self.score = fake_scorer()

    def score_many(self, examples, mode=None):
        return [self.score(ex.question, ex.passages, ex.answer) for ex in examples]


@pytest.mark.parametrize("strict", [False, True])
def test_the_service_reads_ragas_names_documents_and_unknown_fields(strict):
    from franq.apps.serve import create_app

    body = {"user_input": "When was the Eiffel Tower built?", "response": "It was built in 1889.",
            "retrieved_contexts": [{"page_content": "The tower was built in 1889.", "metadata": {"title": "Eiffel"}},
                                   {"content": "Paris.", "meta": {"url": "u"}}]}
    with serve_in_thread(create_app(FakePipeline(strict))) as base:
        http = httpx.Client(timeout=None)
        r = http.post(f"{base}/score", json=body)
        assert r.status_code == 200, r.text
        out = r.json()
        assert out["question"] == body["user_input"] and out["answer"] == body["response"]
        assert out["passages"] == [{"text": "The tower was built in 1889.", "title": "Eiffel"},
                                   {"text": "Paris.", "title": ""}]
        assert out["meta"] == {"passage_metadata": {"1": {"url": "u"}}}
        r = http.post(f"{base}/score_many", json={"examples": [{**body, "trace": 1}, {**body, "trace": 2}]})
        if strict:
            assert r.status_code == 400 and "examples[0]: unknown field(s) ['trace']" in r.json()["detail"]
        else:
            assert r.status_code == 200, r.text
            assert [x["meta"]["unknown_fields"] for x in r.json()["results"]] == [{"trace": 1}, {"trace": 2}]
        r = http.post(f"{base}/score", json={**body, "question": "q"})
        assert r.status_code == 400 and "'user_input' and 'question' both given" in r.json()["detail"]


def test_the_services_limits_hold_for_document_passages():
    from franq.apps.serve import create_app

    body = {"question": Q, "answer": A, "passages": [{"page_content": "x" * 300, "metadata": {}}]}
    with serve_in_thread(create_app(FakePipeline(), limits={"passage_chars": 200})) as base:
        r = httpx.Client(timeout=None).post(f"{base}/score", json=body)
    assert r.status_code == 413 and "passages[0]" in r.json()["detail"], r.text


def test_what_the_reader_kept_travels_to_ray_workers():
    from franq.runners.ray import _example_json
    from franq.runners.records import Record

    ex = parse_example({"question": Q, "answer": A, "contexts": [{"page_content": "d", "metadata": {"title": "T", "k": 1}}],
                        "trace": 1, "sufficient": True, "meta": {"user": "ann"}})
    back = parse_example(json.loads(_example_json(Record(1, "i", ex))), strict=True)  # re-read as a worker does
    assert (back.passages, back.labels, back.meta) == (ex.passages, ex.labels, ex.meta)
    assert back.meta == {"user": "ann", "unknown_fields": {"trace": 1}, "passage_metadata": {"0": {"k": 1}}}
