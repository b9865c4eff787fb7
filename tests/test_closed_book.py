"""An answer without passages is scored closed-book everywhere (readers, pipeline, batch,
report, API, service): nothing supports a claim, so P(true) is UQ_unfaith."""
from __future__ import annotations

import json

import pytest

from conftest import GOOD, run_cli

CLOSED = {"question": "Who designed the Eiffel Tower?", "passages": [],
          "answer": "Gustave Eiffel designed it. It is in Paris."}


def test_an_empty_passages_list_is_accepted_by_every_reader():
    from franq.io import parse_example, parse_passages
    from franq.runners.records import parse_record

    assert parse_passages([]) == ()
    assert parse_example(CLOSED).passages == ()
    assert parse_record(json.dumps(CLOSED), 1).passages == ()


class Refuses:
    """A faithfulness backend that must not be asked about an answer without passages."""

    name = "refuses"
    needs = frozenset()

    def predict(self, pairs, evidence=None):
        raise AssertionError(f"asked about {len(pairs)} claims without passages")


@pytest.mark.parametrize("config", [
    {},
    {"faithfulness": {"name": "combined"}},
    {"faithfulness": {"name": "context_pmi"}},
    {"mode": "short", "uq": {"n_samples": 3, "max_sample_tokens": 4}},
    {"mode": "short", "uq": {"n_samples": 3, "max_sample_tokens": 4, "short_scoring": "in_policy"}},
    {"mode": "short", "uq": {"n_samples": 3, "max_sample_tokens": 4, "unfaith_samples": "closed"}},
], ids=["long-lexical", "long-combined", "long-context_pmi", "short-observer", "short-in_policy", "short-closed"])
def test_an_answer_without_passages_is_scored_closed_book(tiny_lm, make_franq, config):
    from franq.io import parse_example

    with_passages = parse_example(GOOD)
    result, other = make_franq(tiny_lm, config).score_many([parse_example(CLOSED), with_passages])
    scored = result.scored
    assert scored and all(c.p_faithful == 0.0 for c in scored)  # nothing supports a claim
    assert all(c.p_true_raw == pytest.approx(c.uq_unfaith) for c in scored)  # P(true) is UQ_unfaith
    assert other.scored  # the answer beside it, with passages, is scored as before


def test_a_backend_is_never_asked_about_an_answer_without_passages(tiny_lm, make_franq):
    from franq.io import parse_example

    [result] = make_franq(tiny_lm, faithfulness=Refuses()).score_many([parse_example(CLOSED)])
    assert result.scored and all(c.p_faithful == 0.0 for c in result.scored)


def test_a_batch_line_without_passages_is_scored_and_the_report_says_no_passages(tiny_lm_path, tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(CLOSED | {"id": "closed"}) + "\n")
    out, html = tmp_path / "out.jsonl", tmp_path / "r.html"
    result = run_cli("score", str(src), "-o", str(out), "--model", str(tiny_lm_path), "--quiet")
    assert result.exit_code == 0, result.output
    [record] = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["passages"] == [] and all(c["p_faithful"] == 0.0 for c in record["claims"])
    assert run_cli("report", str(out), "-o", str(html)).exit_code == 0
    page = html.read_text()
    assert "no passages (scored closed-book)" in page and "retrieval returned nothing" in page
    assert "written by an older franq" not in page


def test_the_api_and_the_service_accept_an_answer_without_passages(tiny_lm, make_franq):
    import httpx
    from servers import serve_in_thread

    from franq.apps.serve import create_app

    direct = make_franq(tiny_lm).score(CLOSED["question"], [], CLOSED["answer"])
    assert direct.scored and all(c.p_faithful == 0.0 for c in direct.scored)
    with serve_in_thread(create_app(make_franq(tiny_lm), max_body_bytes=4096)) as base:
        r = httpx.Client(timeout=None).post(f"{base}/score", json=CLOSED)
    assert r.status_code == 200, r.text
    record = r.json()
    assert record["passages"] == [] and all(c["p_faithful"] == 0.0 for c in record["claims"])

