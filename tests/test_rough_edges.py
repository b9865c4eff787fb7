"""Issue 47 item 6, the rough edges a new user hit, each through the real command: the
report's HTML verdict column at --threshold, a batch's CSV at --threshold, the short
answer's generation budget, the answer shown after a fallback, markdown labels not
scored as claims, and progress for long answers."""
from __future__ import annotations

import csv
import io
import json
import re

from click.testing import CliRunner

from franq.cli import main


def _claim(text, spans, p):
    return {"claim": {"text": text, "char_spans": spans}, "status": "scored", "p_true_raw": p}


def test_report_threshold_fills_the_html_verdict_column_like_the_csv(tmp_path):
    record = {"id": "a", "question": "q", "answer": "One. Two.", "mode": "long", "model": "m", "faithfulness": "f",
              "claims": [_claim("One.", [[0, 4]], 0.9), _claim("Two.", [[5, 9]], 0.1)]}
    src = tmp_path / "scores.jsonl"
    src.write_text(json.dumps(record) + "\n", encoding="utf-8")
    res = CliRunner().invoke(main, ["report", str(src), "-o", str(tmp_path / "r.html"), "--csv",
                                    str(tmp_path / "c.csv"), "--threshold", "0.5"])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO((tmp_path / "c.csv").read_text())))
    csv_verdicts = [r["verdict"] for r in rows]
    assert csv_verdicts == ["likely_true", "likely_false"]
    html = (tmp_path / "r.html").read_text()
    cells = re.findall(r'<tr class="claim-row".*?</tr>', html)
    html_verdicts = [re.findall(r"<td>(.*?)</td>", row)[3] for row in cells]
    assert html_verdicts == csv_verdicts
    # without --threshold both show the records' own (here: none)
    res = CliRunner().invoke(main, ["report", str(src), "-o", str(tmp_path / "r2.html")])
    assert res.exit_code == 0, res.output
    cells = re.findall(r'<tr class="claim-row".*?</tr>', (tmp_path / "r2.html").read_text())
    assert [re.findall(r"<td>(.*?)</td>", row)[3] for row in cells] == ["", ""]


def test_batch_csv_at_a_threshold(tiny_lm_path, tmp_path):
    """`franq score in.jsonl --threshold 0.5 --format csv`: one row per claim of every record,
    with verdicts; a bad record is reported on stderr and the batch carries on."""
    from conftest import GOOD, tiny_cli_args

    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": "r1", **GOOD}) + "\n" + json.dumps({"id": "bad", "question": "q"}) + "\n"
                   + json.dumps({"id": "r2", **GOOD}) + "\n", encoding="utf-8")
    res = CliRunner().invoke(main, ["score", str(src), "--threshold", "0.5", "--format", "csv", "--quiet",
                                    *tiny_cli_args(tiny_lm_path)])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert [r["id"] for r in rows] == ["r1", "r1", "r2", "r2"]
    assert all(r["verdict"] in ("likely_true", "likely_false", "uncertain") for r in rows)
    assert "line 2: missing field 'passages'" in res.stderr  # the bad record, named by its field
