"""Hostile command lines (issue 47.5) through the real ``franq`` command: outputs that would
overwrite what a user gave (the batch's default error file, ``bench sample-records`` onto its
source), numbers that are not numbers or out of range (``nan``, ``inf``, ``-3``, ``0``, a label
of 7), rows missing keys (``trust run`` / ``trust report``), outputs into a folder that takes no
files or onto ``/dev/full``, a CUDA device on a machine without one, bad ``fit`` / ``bench``
arguments. Each ends in one line naming the option or field and loses nothing."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GOOD, run_cli, tiny_cli_args

FIXTURE = Path(__file__).parent / "fixtures" / "result-0.1-example.jsonl"
NO_FILES = "/sys" if os.path.isdir("/sys") else None
"""A folder that takes no files, for root too (a chmod-ed folder is writable by root)."""


def _one_line_error(r, *words):
    assert r.exit_code not in (0, None), r.output
    err = [line for line in r.output.splitlines() if line.startswith("Error:")]
    assert len(err) == 1 and "Traceback" not in r.output, r.output
    for w in words:
        assert w in err[0], err[0]
    return err[0]


def _records(path, n):
    path.write_text("".join(json.dumps({**GOOD, "id": f"r{i}"}) + "\n" for i in range(n)))
    return path


# ---------------------------------------------------------------------- data loss
def test_html_onto_the_batch_default_error_file_is_refused(tmp_path, tiny_lm_path):
    src = _records(tmp_path / "in.jsonl", 2)
    errors = tmp_path / "out.jsonl.errors.jsonl"
    errors.write_text('{"line": 3, "error": "kept"}\n')
    r = run_cli("score", src, "-o", tmp_path / "out.jsonl", "--html", errors, *tiny_cli_args(tiny_lm_path))
    _one_line_error(r, "--html", "same file", "error file")
    assert errors.read_text() == '{"line": 3, "error": "kept"}\n' and not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("how", ["same", "symlink", "hardlink"])
def test_bench_sample_records_never_overwrites_its_source(tmp_path, how):
    src = _records(tmp_path / "src.jsonl", 60)
    before = src.read_text()
    target = src
    if how != "same":
        target = tmp_path / "other.jsonl"
        (os.symlink if how == "symlink" else os.link)(src, target)
    r = run_cli("bench", "sample-records", src, target, "--n", "1")
    _one_line_error(r, "same file")
    assert src.read_text() == before


@pytest.mark.parametrize("n", ["-3", "0", "nan", "2.5"])
def test_bench_sample_records_needs_a_positive_count(tmp_path, n):
    src = _records(tmp_path / "src.jsonl", 5)
    r = run_cli("bench", "sample-records", src, tmp_path / "t.jsonl", "--n", n)
    _one_line_error(r, "--n", "whole number")
    assert not (tmp_path / "t.jsonl").exists()


# ---------------------------------------------------------------------- numbers
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1.5", "-0.1"])
def test_threshold_must_be_a_probability(value):
    _one_line_error(run_cli("score", "--example", "--threshold", value), "--threshold", "finite number in [0, 1]")


@pytest.mark.parametrize("value", ["nan", "inf", "1e999"])
def test_temperature_must_be_finite(tmp_path, value):
    config = tmp_path / "c.toml"
    config.write_text(f"[uq]\ntemperature = {value}\n")
    _one_line_error(run_cli("score", "--example", "--config", config), "uq.temperature")


def _selective_rows(path, label=1):
    rows = [{"p_true": i / 20, "correct": (label if i == 3 else i % 2)} for i in range(20)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("value", ["nan", "inf", "abc"])
def test_abstain_utility_must_be_finite(tmp_path, value):
    r = run_cli("selective", "threshold", _selective_rows(tmp_path / "s.jsonl"), "-o", tmp_path / "p.json",
                "--score", "p_true", "--abstain-utility", value)
    _one_line_error(r, "--abstain-utility")
    assert not (tmp_path / "p.json").exists()


@pytest.mark.parametrize("label", [7, -1, 0.5])
def test_a_label_that_is_not_0_or_1_is_refused(tmp_path, label):
    r = run_cli("selective", "threshold", _selective_rows(tmp_path / "s.jsonl", label), "-o", tmp_path / "p.json",
                "--score", "p_true")
    _one_line_error(r, "'correct' is a label", "line 4")


@pytest.mark.parametrize("value", ["0", "-5", "nan"])
def test_chunk_tokens_must_be_positive(tmp_path, value):
    r = run_cli("sufficiency", _records(tmp_path / "in.jsonl", 1), "-o", tmp_path / "o.jsonl",
                "--chunk-tokens", value)
    _one_line_error(r, "--chunk-tokens")


@pytest.mark.parametrize("args", [
    ["trust", "run", "COND", "--out", "OUT", "--limit", "-1"],
    ["bench", "observe", "long", "--split", "train", "--limit", "-1"],
    ["trust", "build", "COND", "--pool", "COND", "--out", "OUT/x.jsonl", "--limit", "0"],
    ["bench", "decompose", "--threshold", "nan"],
    ["bench", "decompose", "--max-seconds", "-1"],
    ["bench", "observer", "--n-boot", "0"],
    ["bench", "judges", "--questions", "-2"],
    ["bench", "short", "--n", "nan"],
    ["bench", "report", "--n-boot", "-5"],
    ["fit", "probe", "COND", "-o", "OUT/p.json", "--folds", "1"],
    ["fit", "calibrator", "COND", "-o", "OUT/c.json", "--holdout", "nan"],
    ["score", "COND", "--cpus-per-worker", "inf"],
    ["answer", "-q", "q", "-p", "p", "--verify-threshold", "nan"],
    ["report", "COND", "-o", "OUT/r.html", "--threshold", "nan"],
    ["sufficiency", "COND", "-o", "OUT/o.jsonl", "--threshold", "inf"],
])
def test_bad_numbers_on_every_command_are_one_line(tmp_path, args):
    cond = _records(tmp_path / "c.jsonl", 1)
    (tmp_path / "out").mkdir()
    argv = [str(cond) if a == "COND" else a.replace("OUT", str(tmp_path / "out")) for a in args]
    _one_line_error(run_cli(*argv), "Invalid value for")


# ---------------------------------------------------------------------- rows missing keys
TRUST_RECORD = {"id": "q1", "condition": "clean", "question": "Who?", "passages": [{"title": "T", "text": "x"}],
                "answers": ["A"], "fake_answer": "B", "gold_ids": [1], "poison_ids": [], "poison_ratio": 0.0,
                "poison_actual": 0.0, "distractors": 0}


@pytest.mark.parametrize("drop", ["condition", "id", "question", "passages", "poison_ids"])
def test_trust_run_on_records_missing_keys_is_one_line(tmp_path, drop):
    rec = {k: v for k, v in TRUST_RECORD.items() if k != drop}
    (tmp_path / "c.jsonl").write_text(json.dumps(TRUST_RECORD) + "\n" + json.dumps(rec) + "\n")
    r = run_cli("trust", "run", tmp_path / "c.jsonl", "--out", tmp_path / "run", "--no-franq",
                "--base-url", "http://127.0.0.1:9/v1", "--model", "m")
    _one_line_error(r, "record 2", repr(drop))


def test_trust_run_on_a_passage_without_title_is_one_line(tmp_path):
    (tmp_path / "c.jsonl").write_text(json.dumps({**TRUST_RECORD, "passages": [{"text": "x"}]}) + "\n")
    r = run_cli("trust", "run", tmp_path / "c.jsonl", "--out", tmp_path / "run", "--no-franq",
                "--base-url", "http://127.0.0.1:9/v1", "--model", "m")
    _one_line_error(r, "'passages'")


@pytest.mark.parametrize("drop", ["strategy", "answer", "fake_answer", "gold_ids", "model", "distractors"])
def test_trust_report_on_rows_missing_keys_is_one_line(tmp_path, drop):
    row = {**TRUST_RECORD, "strategy": "s", "model": "m", "prompt_version": 1, "max_new_tokens": 8,
           "answer": "Answer: A [1]"}
    (tmp_path / "answers.jsonl").write_text(json.dumps({k: v for k, v in row.items() if k != drop}) + "\n")
    _one_line_error(run_cli("trust", "report", tmp_path, "--no-plots"), repr(drop))


# ---------------------------------------------------------------------- outputs that cannot be written
@pytest.mark.skipif(NO_FILES is None, reason="no folder that refuses files")
@pytest.mark.parametrize("args", [
    ["score", "--example", "--html", "NOFILES/r.html"],
    ["report", "FIXTURE", "-o", "NOFILES/r.html"],
    ["report", "FIXTURE", "--csv", "NOFILES/c.csv"],
    ["fit", "calibrator", "FIXTURE", "-o", "NOFILES/c.json"],
    ["bench", "sample-records", "FIXTURE", "NOFILES/s.jsonl", "--n", "1"],
])
def test_an_output_in_a_folder_that_takes_no_files_is_refused_before_work(args):
    argv = [str(FIXTURE) if a == "FIXTURE" else a.replace("NOFILES", NO_FILES) for a in args]
    _one_line_error(run_cli(*argv), "cannot write in")


def _franq(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1]), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "franq", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd)


@pytest.mark.parametrize("args", [["-o", "/dev/full"], ["--csv", "/dev/full"]])
def test_report_onto_dev_full_is_one_line(args):
    p = _franq("report", FIXTURE, *args)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.strip().splitlines()[-1].startswith("Error:") and "No space left" in p.stderr


def test_score_html_onto_dev_full_is_one_line(tiny_lm_path):
    p = _franq("score", "--example", "--quiet", "--html", "/dev/full", *tiny_cli_args(tiny_lm_path))
    assert p.returncode == 1 and "Traceback" not in p.stderr and "No space left" in p.stderr, p.stderr


# ---------------------------------------------------------------------- devices, fit and bench arguments
@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="this machine has CUDA")
@pytest.mark.parametrize("device", ["cuda", "cuda:3"])
def test_a_cuda_device_without_cuda_is_one_line(tiny_lm_path, device):
    args = tiny_cli_args(tiny_lm_path)
    _one_line_error(run_cli("score", "--example", *args, "--device", device), "CUDA", "--device cpu")


def test_fit_verifier_without_its_raw_data_is_one_line(tmp_path):
    (tmp_path / "raw").mkdir()
    r = run_cli("fit", "verifier", "-o", tmp_path / "v", "--raw", tmp_path / "raw",
                "--datasets", Path(__file__).parents[1] / "datasets")
    _one_line_error(r)


def test_fit_faithfulness_reads_string_passages(tmp_path):
    recs = [{"id": f"r{i}", "question": "q", "passages": ["The tower is in Paris."], "answer": "a",
             "claims": [{"text": "The tower is in Paris." if i % 2 else "It is gold.", "is_faithful": bool(i % 2)}]}
            for i in range(6)]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    r = run_cli("fit", "faithfulness", tmp_path / "t.jsonl", "-o", tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "out" / "faithfulness-combined.json").read_text())


def test_fit_faithfulness_on_bad_passages_is_one_line(tmp_path):
    rec = {"id": "r", "question": "q", "passages": [7], "answer": "a", "claims": [{"text": "c", "is_faithful": True}]}
    (tmp_path / "t.jsonl").write_text(json.dumps(rec) + "\n")
    _one_line_error(run_cli("fit", "faithfulness", tmp_path / "t.jsonl", "-o", tmp_path / "out"), "passages")
