"""The quality evaluations are ``franq bench`` commands (they were scripts)."""
from __future__ import annotations

import json

from click.testing import CliRunner

from franq.cli import main

QUALITY = ("faithfulness", "calibration", "judges", "short", "observer", "se-probe", "internals", "internals-data",
           "decompose", "atomic", "sample-records")


def test_bench_lists_the_quality_evaluations():
    result = CliRunner().invoke(main, ["bench", "--help"])
    assert result.exit_code == 0, result.output
    listed = {line.split()[0] for line in result.output.split("Commands:")[1].splitlines() if line.strip()}
    assert set(QUALITY) | {"observe", "report", "all"} <= listed


def test_sample_records_draws_a_seeded_sample(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"id": str(i)}) + "\n" for i in range(10)), encoding="utf-8")
    runs = []
    for name in ("a.jsonl", "b.jsonl"):
        result = CliRunner().invoke(main, ["bench", "sample-records", str(source), str(tmp_path / name), "--n", "4"])
        assert result.exit_code == 0, result.output
        assert "wrote 4 of 10 records" in result.output
        runs.append((tmp_path / name).read_text(encoding="utf-8"))
    assert runs[0] == runs[1] and len(runs[0].splitlines()) == 4


def test_short_summarize_prints_the_tables(tmp_path):
    rec = {"question": "q", "answers": ["a"], "answer": "a", "samples_rag": ["a", "b"], "p_faithful": 0.5,
           "t": {"greedy": 1.0}, "u_se_normalized_rag": 0.1, "u_eigval_normalized_rag": 1.0,
           "u_se_lm_rag": 0.2, "u_eigval_lm_rag": 1.5}
    path = tmp_path / "short.jsonl"
    path.write_text("".join(json.dumps(rec | {"correct": c, "p_faithful": p}) + "\n"
                            for c, p in ((True, 0.9), (False, 0.2))), encoding="utf-8")
    result = CliRunner().invoke(main, ["bench", "short", "--summarize", str(path)])
    assert result.exit_code == 0, result.output
    assert "2 questions, greedy accuracy 0.50" in result.output
    assert "| P_faithful (lexical, question + answer) | 1.000 |" in result.output
