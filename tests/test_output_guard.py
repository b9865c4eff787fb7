"""The one output guard (franq.files.check_outputs) on every command that writes: the 12
data-loss paths of the hardening issue, each through the real CLI, and more of the same
kind. Each refused run names both files, exits non-zero before anything is read or
loaded, and leaves every input byte for byte as it was."""
from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from franq.cli import main
from franq.files import atomic_open, atomic_write, check_outputs
from franq.errors import InputError

EXAMPLE = {"question": "Who wrote Hamlet?", "passages": ["Hamlet is a play by William Shakespeare."],
           "answer": "Shakespeare wrote Hamlet."}
RESULT = {"mode": "long", "model": "m", "faithfulness": "f", "question": "q", "answer": "Ann is tall.",
          "claims": [{"claim": {"text": "Ann is tall", "char_spans": [[0, 11]]}, "status": "scored",
                      "p_true_raw": 0.9}]}


@pytest.fixture
def files(tmp_path):
    """Inputs of every kind, each with content that must survive."""
    paths = {
        "in.jsonl": "\n".join(json.dumps({**EXAMPLE, "id": i}) for i in range(50)) + "\n",
        "ex.json": json.dumps(EXAMPLE),
        "cfg.json": json.dumps({"faithfulness": {"name": "lexical"}}),
        "cal.json": '{"format": "franq-calibrator"}',
        "scores.jsonl": json.dumps(RESULT) + "\n",
        "rows.jsonl": "".join(json.dumps({"p": i / 40, "correct": i % 2}) + "\n" for i in range(40)),
        "q.jsonl": json.dumps({"id": "q1", "question": "Who?", "answers": ["Ann"],
                               "gold_passages": ["Ann did it."]}) + "\n",
        "pool.jsonl": json.dumps({"id": "p1", "title": "t", "text": "Bob was there."}) + "\n",
    }
    for name, text in paths.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def run_refused(args, tmp_path, *inputs, match="same file"):
    before = {name: (tmp_path / name).read_bytes() for name in inputs}
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exit_code != 0, res.output
    assert match in res.output and "Traceback" not in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1, res.output  # one line
    for name, data in before.items():
        assert (tmp_path / name).read_bytes() == data, f"{name} was changed"
    return res.output


# ---------------------------------------------------------------- the 12 paths of the issue
def test_score_html_onto_the_batch_input(files):
    run_refused(["score", files / "in.jsonl", "-o", files / "out.jsonl", "--html", files / "in.jsonl"],
                files, "in.jsonl")
    assert not (files / "out.jsonl").exists()


def test_score_html_onto_the_json_example(files):
    run_refused(["score", files / "ex.json", "--html", files / "ex.json"], files, "ex.json")


def test_score_html_onto_the_config(files):
    run_refused(["score", "--example", "--config", files / "cfg.json", "--html", files / "cfg.json"], files, "cfg.json")


def test_score_html_onto_the_calibrator(files):
    out = run_refused(["score", "--example", "--calibrator", files / "cal.json", "--html", files / "cal.json"],
                      files, "cal.json")
    assert "--calibrator" in out and "--html" in out


def test_score_html_onto_one_calibrator_of_a_list(files):
    out = run_refused(["score", "--example", "--calibrator", f"default,{files / 'cal.json'}",
                       "--html", files / "cal.json"], files, "cal.json")
    assert "--calibrator (2)" in out and "--html" in out


def test_answer_html_onto_the_config(files):
    run_refused(["answer", "-q", "Who?", "-p", "Ann.", "--config", files / "cfg.json", "--html", files / "cfg.json"],
                files, "cfg.json")


def test_sufficiency_output_onto_the_input(files):
    run_refused(["sufficiency", files / "in.jsonl", "-o", files / "in.jsonl", "--rater", "contains_gold"],
                files, "in.jsonl")


def test_sufficiency_errors_onto_the_input(files):
    run_refused(["sufficiency", files / "in.jsonl", "-o", files / "o.jsonl", "--errors", files / "in.jsonl",
                 "--rater", "contains_gold"], files, "in.jsonl")


def test_sufficiency_output_through_a_symlink_to_the_input(files):
    os.symlink(files / "in.jsonl", files / "link.jsonl")
    out = run_refused(["sufficiency", files / "in.jsonl", "-o", files / "link.jsonl", "--rater", "contains_gold"],
                      files, "in.jsonl")
    assert "another name" in out


@pytest.mark.parametrize("command", [["fit", "--features", "p"], ["threshold", "--score", "p"]])
def test_selective_policy_onto_the_input(files, command):
    run_refused(["selective", command[0], files / "rows.jsonl", "-o", files / "rows.jsonl", *command[1:]],
                files, "rows.jsonl")


@pytest.mark.parametrize("target", ["q.jsonl", "pool.jsonl"])
def test_trust_build_onto_the_questions_or_the_pool(files, target):
    run_refused(["trust", "build", files / "q.jsonl", "--pool", files / "pool.jsonl", "--out", files / target],
                files, "q.jsonl", "pool.jsonl")


# ---------------------------------------------------------------- more of the same kind
def test_hard_link_counts_as_the_same_file(files):
    os.link(files / "rows.jsonl", files / "hard.json")
    out = run_refused(["selective", "fit", files / "rows.jsonl", "-o", files / "hard.json", "--features", "p"],
                      files, "rows.jsonl")
    assert "another name" in out


@pytest.mark.parametrize("option", ["-o", "--csv"])
def test_report_outputs_onto_the_input(files, option):
    run_refused(["report", files / "scores.jsonl", option, files / "scores.jsonl"], files, "scores.jsonl")


def test_report_html_and_csv_onto_each_other(files):
    run_refused(["report", files / "scores.jsonl", "-o", files / "r.html", "--csv", files / "r.html"],
                files, "scores.jsonl")


def test_score_html_onto_its_own_output(files):
    run_refused(["score", files / "in.jsonl", "-o", files / "out.jsonl", "--html", files / "out.jsonl"],
                files, "in.jsonl")


def test_calibrate_outputs_onto_the_input(files):
    run_refused(["fit", "calibrator", files / "scores.jsonl", "-o", files / "scores.jsonl"], files, "scores.jsonl")
    run_refused(["fit", "calibrator", files / "scores.jsonl", "-o", files / "c.json", "--report", files / "scores.jsonl"],
                files, "scores.jsonl")


def test_fit_probe_onto_the_input(files):
    run_refused(["fit", "probe", files / "in.jsonl", "-o", files / "in.jsonl"], files, "in.jsonl")


@pytest.mark.parametrize("args", [
    ["report", "{scores}", "-o", "{missing}/r.html"],
    ["report", "{scores}", "--csv", "{missing}/c.csv"],
    ["score", "--example", "--html", "{missing}/r.html"],
    ["sufficiency", "{input}", "-o", "{missing}/o.jsonl", "--rater", "contains_gold"],
    ["selective", "fit", "{rows}", "-o", "{missing}/p.json", "--features", "p"],
    ["trust", "build", "{q}", "--pool", "{pool}", "--out", "{missing}/c.jsonl"],
])
def test_output_in_a_missing_directory_is_one_line(files, args):
    names = {"scores": files / "scores.jsonl", "missing": files / "nope", "input": files / "in.jsonl",
             "rows": files / "rows.jsonl", "q": files / "q.jsonl", "pool": files / "pool.jsonl"}
    run_refused([a.format(**names) for a in args], files, "scores.jsonl", "in.jsonl", match="does not exist")
    assert not (files / "nope").exists()


def test_report_writes_and_replaces_its_output_atomically(files):
    (files / "r.html").write_text("old report")
    os.chmod(files / "r.html", 0o640)
    res = CliRunner().invoke(main, ["report", str(files / "scores.jsonl"), "-o", str(files / "r.html")])
    assert res.exit_code == 0, res.output
    assert "<html" in (files / "r.html").read_text() and os.stat(files / "r.html").st_mode & 0o777 == 0o640
    assert [p.name for p in files.iterdir() if p.name.endswith(".tmp")] == []


# ---------------------------------------------------------------- the library pieces
def test_atomic_open_leaves_the_old_file_on_failure(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("precious")
    with pytest.raises(RuntimeError):
        with atomic_open(str(target)) as f:
            f.write("half")
            raise RuntimeError("disk full")
    assert target.read_text() == "precious" and sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]
    atomic_write(str(target), "new")
    assert target.read_text() == "new"


def test_atomic_write_to_a_device_is_a_stream():
    atomic_write(os.devnull, "nothing lost")  # no rename over /dev/null
    assert os.path.exists(os.devnull) and not os.path.isfile(os.devnull)


def test_check_outputs_rules(tmp_path):
    a = tmp_path / "a"
    a.write_text("x")
    check_outputs({"-o": str(tmp_path / "new")}, {"in 1": str(a), "in 2": str(a)})  # inputs may repeat
    check_outputs({"-o": os.devnull, "--csv": os.devnull}, {"input": str(a)})  # streams lose nothing
    with pytest.raises(InputError, match="same file"):
        check_outputs({"-o": str(tmp_path / "new"), "--csv": str(tmp_path / "sub" / ".." / "new")})
    with pytest.raises(InputError, match="is a directory"):
        check_outputs({"-o": str(tmp_path)})
