"""The shared views (franq/apps/render.py) and `franq report` / `franq score --html`
without a browser: geometry of the highlights, colour buckets, passage windows, escaping,
CSV; the DOM in a real browser is tests/test_browser.py."""
from __future__ import annotations

import csv
import io
import json
import re

import pytest
from click.testing import CliRunner

import franq
from franq.apps import render
from franq.cli import main


def _claim(text, spans, p=None, status="scored", **extra):
    return {"claim": {"text": text, "char_spans": spans}, "status": status, "p_true_raw": p, **extra}


def _line(record):
    """A hand-made result record read back typed, as `franq report` reads an output line."""
    record = {"mode": "long", "model": "m", "faithfulness": "f", **record}
    return next(franq.read_results(record, with_input=True))


def test_segments_cover_the_answer_and_overlapping_claims():
    answer = "Ann is tall and Bob is short."
    claims = [_claim("Ann is tall", [[0, 11]], 0.9), _claim("Ann and Bob", [[0, 3], [16, 19]], 0.1),
              _claim("nowhere", [], 0.5)]
    line = _line({"answer": answer, "claims": claims, "question": "q"})
    segs = render.segments(answer, line.result.claims)
    assert "".join(answer[a:b] for a, b, _ in segs) == answer
    assert segs[0] == (0, 3, (0, 1)) and segs[1] == (3, 11, (0,)) and (16, 19, (1,)) in segs
    html = render.answer_html(line, 0)
    # the overlap takes the colour of its least likely claim
    assert '<mark class="claim pb0" data-claims="0 1" data-p="0.100000" data-bucket="0"' in html


@pytest.mark.parametrize("p, expected", [(0.0, 0), (0.1999, 0), (0.2, 1), (0.5, 2), (0.79, 3), (0.8, 4), (1.0, 4)])
def test_buckets(p, expected):
    assert render.bucket(p) == expected


def test_calibrated_p_true_wins_over_raw():
    claim = franq.Claim("x", ((0, 1),))
    assert render.claim_p_true(franq.ClaimScore(claim, "scored", p_true_raw=1e-9, p_true_calibrated=0.7)) == 0.7
    assert render.claim_p_true(franq.ClaimScore(claim, "scored", p_true_raw=1e-9, p_true_calibrated=None)) == 1e-9


def test_passage_window_is_the_best_overlapping_sentences():
    passages = [franq.Passage("Cats sleep a lot. Dogs bark.", "A"),
                franq.Passage("The tower is in Paris. It was built from 1887 to 1889. It is iron.", "B")]
    w = render.passage_window("The tower was built in 1889.", passages)
    assert w["passage"] == 1 and w["title"] == "B" and "built from 1887 to 1889" in w["text"]
    assert render.passage_window("Zebras are striped.", passages) is None


def test_user_text_is_escaped():
    rec = {"question": "<script>alert(1)</script>", "answer": "<b>x</b> & y",
           "claims": [_claim("<b>x</b>", [[0, 8]], 0.5)], "passages": ["<img src=x onerror=alert(1)> x"],
           "meta": {"note": "</script>"}}
    html = render.report_html([_line(rec)])
    assert "<script>alert(1)" not in html and "<img src=x" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert "</script>\"" not in html


def test_views_read_typed_results_and_a_fresh_result_shows_as_its_line_read_back(tiny_lm):
    from conftest import make_franq

    from franq.apps import claims_csv

    example = franq.Example.from_dict({
        "id": "e1", "question": "When?", "passages": [{"title": "T", "text": "Built in 1889. It is tall."}],
        "answer": "It was built in 1889. It is tall.", "meta": {"user": "ann", "tags": [1, 2]},
        "claims": [{"text": "It was built in 1889.", "is_true": True}, "It is tall."]})
    result = make_franq(tiny_lm).score_many([example])[0]
    fresh = render.Line(example.id, result, example)  # what `franq score --html` renders
    line = json.dumps(franq.result_record(example.id, result, example))  # the output line, read back
    read = next(franq.read_results([line], with_input=True))
    assert render.report_html([fresh]) == render.report_html([read])
    assert claims_csv.csv_text([fresh]) == claims_csv.csv_text([read])
    rows = list(csv.DictReader(io.StringIO(claims_csv.csv_text([read]))))
    assert [r["is_true"] for r in rows] == ["True", ""] and rows[0]["meta.tags"] == "[1, 2]"
    assert "label is_true" in render.answer_html(read, 0) and "meta {" in render.answer_html(read, 0)
    bare = render.report_html([result])  # a bare AnswerScore: no id, passages nor labels
    assert "The record carries no passages" in bare and "label is_true" not in bare
    with pytest.raises(TypeError, match="franq.read_results"):
        render.report_html([franq.result_record(example.id, result, example)])


def _scores(tmp_path):
    records = [{"id": "a", "question": "q1", "answer": "One. Two.", "mode": "long", "model": "m",
                "faithfulness": "f", "claims": [_claim("One.", [[0, 4]], 0.9, signals={"s": 1.0}),
                                                _claim("Two.", [[5, 9]], 0.3, signals={"s": 2.0})],
                "meta": {"user": "ann"}},
               {"id": "b", "question": "q2", "answer": "Hi!", "mode": "long", "model": "m", "faithfulness": "f",
                "claims": [_claim("Hi!", [[0, 3]], status="not_check_worthy")]}]
    path = tmp_path / "scores.jsonl"
    wrong = {**records[1], "claims": [{**records[1]["claims"][0], "status": "ok"}]}
    path.write_text(json.dumps(records[0]) + "\n" + json.dumps({"line": 2, "id": None, "error": "bad"}) + "\n"
                    + "{broken\n" + json.dumps(records[1]) + "\n" + json.dumps(wrong) + "\n", encoding="utf-8")
    return path


def test_report_command_writes_html_and_csv_and_skips_other_lines(tmp_path):
    src = _scores(tmp_path)
    res = CliRunner().invoke(main, ["report", str(src), "-o", str(tmp_path / "r.html"), "--csv",
                                    str(tmp_path / "c.csv"), "--page-size", "1"])
    assert res.exit_code == 0, res.output
    assert "line 2: an error record, not a result; skipped" in res.output and "line 3: not valid JSON" in res.output
    assert "line 5: 'claims[0].status' must be one of ['scored', 'not_check_worthy', 'unaligned'], got 'ok'; " \
           "skipped" in res.output
    html = (tmp_path / "r.html").read_text()
    assert html.count('<section class="answer"') == 2 and 'data-page-size="1"' in html
    assert "http://" not in html and "https://" not in html  # nothing fetched at view time
    rows = list(csv.DictReader(io.StringIO((tmp_path / "c.csv").read_text())))
    assert [(r["id"], r["claim_index"], r["status"]) for r in rows] == [
        ("a", "0", "scored"), ("a", "1", "scored"), ("b", "0", "not_check_worthy")]
    assert rows[1]["p_true"] == "0.3" and rows[1]["signal.s"] == "2.0" and rows[0]["meta.user"] == "ann"
    res = CliRunner().invoke(main, ["report", str(tmp_path / "r.html")])
    assert res.exit_code != 0 and "-o REPORT.html and/or --csv" in res.output


def test_score_html_for_a_single_answer_and_a_batch(tiny_lm_path, tmp_path):
    tiny = ["--model", str(tiny_lm_path), "--faithfulness", "lexical", "--calibrator", "none"]
    res = CliRunner().invoke(main, ["score", "-q", "When?", "-p", "Built in 1889.", "-a", "It was built in 1889.",
                                    "--html", str(tmp_path / "one.html"), *tiny])
    assert res.exit_code == 0, res.output
    assert len(re.findall(r'<mark class="claim pb\d"', (tmp_path / "one.html").read_text())) == 1
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": i, "question": "When?", "passages": ["Built in 1889."],
                                       "answer": "It was built in 1889. It is tall."}) + "\n" for i in range(3)))
    res = CliRunner().invoke(main, ["score", str(src), "-o", str(tmp_path / "out.jsonl"), "--quiet",
                                    "--html", str(tmp_path / "batch.html"), *tiny])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "batch.html").read_text().count('<section class="answer"') == 3
    res = CliRunner().invoke(main, ["score", str(src), "--format", "csv", *tiny])
    assert res.exit_code == 0 and "\nid,claim_index,text," in res.output, res.output  # a batch as CSV (0.3)
