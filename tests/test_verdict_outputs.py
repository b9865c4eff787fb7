"""The verdict, its reason and the per-answer score reach every output (issue 45.2, 45.6):
results (JSONL, read back; lines written before these fields still read), the table, CSV,
the HTML report and the service. A tiny pipeline with a user calibrator whose knowledge map
has no signal (one level at its base rate) makes a claim the passages do not support
``uncertain``."""
from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from conftest import make_franq

import franq
from calibration.contract import ClaimInputs
from calibration.franq import FranqCalibrator
from franq.apps import claims_csv, render
from franq.cli.table import format_table
from franq.verdicts import with_verdicts

QUESTION = "When was the Eiffel Tower built?"
PASSAGES = [{"title": "Eiffel Tower", "text": "The Eiffel Tower was built from 1887 to 1889 in Paris."}]
ANSWER = "The Eiffel Tower was built from 1887 to 1889 in Paris. Its lift cars are painted bright purple."


@pytest.fixture(scope="module")
def calibrated(tiny_lm, tmp_path_factory):
    """A Franq with a threshold and a binary calibrator fitted for its stack: UQ_faith carries
    signal, UQ_unfaith none (a constant score: one level at the base rate)."""
    stack = make_franq(tiny_lm).score(QUESTION, PASSAGES, ANSWER).stack
    rng = np.random.default_rng(0)
    n = 400
    p_f = np.r_[np.full(n // 2, 0.9), np.full(n // 2, 0.1)]
    a = rng.random(n)
    y = np.r_[(rng.random(n // 2) < a[: n // 2]), rng.random(n // 2) < 0.5].astype(float)
    cal = FranqCalibrator(variant="condition", fitted_for=dict(stack)).fit(ClaimInputs(p_f, a, np.full(n, 0.3)), y)
    path = tmp_path_factory.mktemp("cal") / "calibrator.json"
    cal.to_json(path)
    return make_franq(tiny_lm, {"calibration": {"calibrator": str(path), "threshold": 0.5}})


@pytest.fixture(scope="module")
def result(calibrated):
    return calibrated.score(QUESTION, PASSAGES, ANSWER)


def _purple(result):
    return next(c for c in result.claims if "purple" in c.claim.text)


def test_an_unsupported_claim_without_knowledge_signal_is_uncertain(result):
    c = _purple(result)
    assert c.p_faithful < 0.5 and c.verdict == "uncertain" and c.verdict_basis == "calibrated"
    assert "not supported by the passages" in c.verdict_reason and "no usable signal" in c.verdict_reason
    k = c.knowledge
    assert k.p_true == pytest.approx(k.base_rate, abs=0.01) and k.low < 0.5 < k.high
    assert 0 < result.p_all_true < 1 and result.weakest_claim.reason


def test_results_carry_the_new_fields_and_read_back(result):
    record = json.loads(json.dumps(franq.result_record("a1", result)))
    assert record["schema"] == 2 and record["p_all_true"] == pytest.approx(result.p_all_true)
    assert record["weakest_claim"]["index"] == result.weakest_claim.index
    claim = next(c for c in record["claims"] if "purple" in c["claim"]["text"])
    assert claim["verdict"] == "uncertain" and claim["verdict_reason"] and set(claim["knowledge"]) == {
        "p_true", "base_rate", "low", "high", "check_auroc", "check_low", "check_high"}
    back = next(franq.read_results([record]))
    assert back == result
    old = {k: v for k, v in record.items() if k not in ("p_all_true", "weakest_claim")}  # schema 2 before the fields
    old["claims"] = [{k: v for k, v in c.items() if k not in ("verdict_reason", "knowledge")} for c in old["claims"]]
    read = next(franq.read_results([old]))
    assert read.p_all_true == pytest.approx(result.p_all_true) and _purple(read).knowledge is None
    bad = json.loads(json.dumps(record))
    bad["claims"][0]["knowledge"] = {"p_true": 2}
    with pytest.raises(franq.InputError, match=r"'claims\[0\].knowledge.p_true' must be a probability"):
        next(franq.read_results([bad]))


def test_table_shows_the_verdicts_reasons_and_the_answer_score(result):
    text = format_table(result, threshold=0.5)
    assert "uncertain" in text and "P(every claim true):" in text and "weakest claim: #" in text
    assert "no usable signal" in text


def test_csv_has_the_reason_and_the_answer_columns(result):
    rows = list(csv.DictReader(io.StringIO(claims_csv.csv_text([result]))))
    purple = next(r for r in rows if "purple" in r["text"])
    assert purple["verdict"] == "uncertain" and "no usable signal" in purple["verdict_reason"]
    assert {r["answer_p_all_true"] for r in rows} == {repr(result.p_all_true)}
    assert [r["weakest"] for r in rows].count("True") == 1
    bare = with_verdicts(result, None)  # no verdicts: --threshold recomputes them in one place
    buf = io.StringIO()
    claims_csv.write_csv([bare], buf, threshold=0.5)
    again = next(r for r in csv.DictReader(io.StringIO(buf.getvalue())) if "purple" in r["text"])
    assert again["verdict"] == "uncertain"


def test_report_index_and_panel_show_the_answer_score_and_reason(result):
    html = render.report_html([result])
    assert "P(every claim true)" in html and "weakest claim, why" in html
    assert "no usable signal" in html and "knowledge term" in html


def test_service_responses_carry_verdicts_reasons_and_answer_score(calibrated):
    pytest.importorskip("fastapi")
    import httpx
    from servers import serve_in_thread

    from franq.apps.serve import create_app

    with serve_in_thread(create_app(calibrated)) as url:
        r = httpx.post(f"{url}/score", json={"question": QUESTION, "passages": PASSAGES, "answer": ANSWER,
                                             "threshold": 0.5}, timeout=None)
    assert r.status_code == 200, r.text
    body = r.json()
    claim = next(c for c in body["claims"] if "purple" in c["claim"]["text"])
    assert claim["verdict"] == "uncertain" and claim["verdict_reason"]
    assert 0 < body["p_all_true"] < 1 and body["weakest_claim"]["reason"]
