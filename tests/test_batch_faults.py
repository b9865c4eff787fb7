"""Fault injection for the batch runner: aliasing paths, special outputs, write
failures (disk full, read-only, permission), damaged output lines, signals at random points.

Every case checks the guarantee, not just the message: the input is never changed, no
result already written is lost or duplicated, a damaged line is kept in the recovery file,
and a rerun finishes the job. The scoring runner is a stand-in (:class:`EchoRunner`), so
these tests load no model and take seconds.
"""
from __future__ import annotations

import errno
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from franq.errors import FranqError
from franq.runners import output as output_mod
from franq.runners.base import Scored
from franq.runners.local import run_jsonl

ROOT = Path(__file__).resolve().parents[1]


class EchoRunner:
    """Scores a record as an output line carrying its id and answer (no model)."""

    def __init__(self, delay: float = 0.0, per_batch: int = 1):
        self.delay = delay
        self.per_batch = per_batch

    def run(self, records):
        batch = []
        for r in records:
            if self.delay:
                time.sleep(self.delay)
            batch.append(Scored(r.line, r.id, json.dumps({"id": r.id, "answer": r.example.answer, "claims": [],
                                                           "mode": "long"}, ensure_ascii=False), 0))
            if len(batch) >= self.per_batch:
                yield batch
                batch = []
        if batch:
            yield batch


def record(i: int, with_id: bool = True) -> dict:
    rec = {"question": f"Where is tower {i}?", "passages": [f"Tower {i} is in Paris."], "answer": f"Tower {i}."}
    if with_id:
        rec["id"] = f"r{i}"
    return rec


def write_input(path: Path, n: int, with_id: bool = True) -> bytes:
    data = "".join(json.dumps(record(i, with_id)) + "\n" for i in range(n)).encode()
    path.write_bytes(data)
    return data


def run(src, out, errors=None, **kw):
    return run_jsonl(lambda: EchoRunner(**kw), str(src), None if out is None else str(out),
                     errors_path=None if errors is None else str(errors), progress=False)


def out_ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()]


# ---------------------------------------------------------------------------- aliasing paths
ALIASES = {
    # name: (build(tmp, src, out) -> (output, errors)), role that is refused
    "errors is the input": (lambda t, s, o: (o, s), "error file"),
    "errors is the output": (lambda t, s, o: (o, o), "error file"),
    "output is the input": (lambda t, s, o: (s, None), "output"),
    "output is a symlink to the input": (lambda t, s, o: (_symlink(t / "link.jsonl", s), None), "output"),
    "errors is a hard link to the input": (lambda t, s, o: (o, _hardlink(t / "hard.jsonl", s)), "error file"),
    "errors is a hard link to the output": (lambda t, s, o: (o, _hardlink(t / "hard-out.jsonl", o)), "error file"),
    "errors via a symlinked directory": (lambda t, s, o: (o, _symlink(t / "d", t) / "out.jsonl"), "error file"),
    "errors is the recovery file": (lambda t, s, o: (o, Path(str(o) + ".recovered")), "recovery file"),
    "output and errors: same new file, two spellings": (lambda t, s, o: (t / "new.jsonl", t / "." / "new.jsonl"),
                                                         "error file"),
    "output is a dangling symlink to the input's name": (lambda t, s, o: (_symlink(t / "dl.jsonl", t / "nx.jsonl"),
                                                                          t / "nx.jsonl"), "error file"),
}


def _symlink(link: Path, target: Path) -> Path:
    link.symlink_to(target)
    return link


def _hardlink(link: Path, target: Path) -> Path:
    if not target.exists():
        target.write_text("")
    os.link(target, link)
    return link


@pytest.mark.parametrize("case", sorted(ALIASES))
def test_aliasing_paths_are_refused_before_anything_is_read_or_written(tmp_path, case):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    data = write_input(src, 3)
    run(src, out)  # 3 results to protect
    before = out.read_bytes()
    build, role = ALIASES[case]
    output, errors = build(tmp_path, src, out)
    with pytest.raises(FranqError, match=f"^{role}: .* is the same file as the ") as err:
        run(src, output, errors)
    assert "nothing was read or written" in str(err.value)
    assert src.read_bytes() == data, "the input changed"
    assert out.read_bytes() == before, "earlier results changed"


def test_standard_output_appending_to_the_input_is_refused(tmp_path, monkeypatch):
    src = tmp_path / "in.jsonl"
    data = write_input(src, 3)
    with open(src, "a", encoding="utf-8") as same:  # franq score in.jsonl >> in.jsonl
        monkeypatch.setattr(sys, "stdout", same)
        with pytest.raises(FranqError, match="output: standard output is the same file as the input"):
            run(src, None)
    assert src.read_bytes() == data


def test_cli_refuses_errors_on_the_input_with_one_line_and_exit_1(tmp_path):
    from franq.cli import main

    src = tmp_path / "in.jsonl"
    data = write_input(src, 2)
    res = CliRunner().invoke(main, ["score", str(src), "-o", str(tmp_path / "o.jsonl"), "--errors", str(src),
                                    "--config", str(_no_model_config(tmp_path))])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert res.output.startswith("Error: error file: ") and len(res.output.strip().splitlines()) == 1
    assert src.read_bytes() == data


def _no_model_config(tmp_path: Path) -> Path:
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"model": {"path": str(tmp_path / "no-model-needed")}}))
    return cfg


# ---------------------------------------------------------------------------- special outputs
def test_dev_null_output_streams_and_finishes(tmp_path):
    src = tmp_path / "in.jsonl"
    write_input(src, 4)
    summary = run(src, "/dev/null")
    assert (summary.scored, summary.errors_path, summary.recovery_path) == (4, None, None)


def test_dev_full_output_fails_with_one_line_naming_it(tmp_path):
    src = tmp_path / "in.jsonl"
    write_input(src, 2)
    with pytest.raises(FranqError, match="^output: cannot write /dev/full: No space left on device"):
        run(src, "/dev/full")


def test_dev_full_error_file_fails_with_one_line_naming_it(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(record(0)) + "\nnot json\n")
    with pytest.raises(FranqError, match="^error file: cannot write /dev/full: No space left on device"):
        run(src, tmp_path / "out.jsonl", "/dev/full")


def _script(body: str) -> list[str]:
    return [sys.executable, "-c", "import json, sys, time\nsys.path.insert(0, 'tests')\n"
            "from test_batch_faults import EchoRunner\nfrom franq.runners.local import run_jsonl\n" + body]


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}", "OMP_NUM_THREADS": "1"}


def test_dev_stdout_into_a_pipe_streams_and_ends(tmp_path):
    src = tmp_path / "in.jsonl"
    write_input(src, 5)
    proc = subprocess.run(_script(f"print(run_jsonl(EchoRunner, {str(src)!r}, '/dev/stdout', progress=False)"
                                  f".scored, file=sys.stderr)"),
                          cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(x)["id"] for x in proc.stdout.splitlines()] == [f"r{i}" for i in range(5)]


def test_broken_pipe_on_standard_output_is_a_franq_error(tmp_path, monkeypatch):
    class ClosedPipe:
        def write(self, text):
            raise BrokenPipeError(errno.EPIPE, "Broken pipe")

        def flush(self):
            pass

        def fileno(self):
            raise OSError("not a real stream")

    src = tmp_path / "in.jsonl"
    write_input(src, 2)
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    with pytest.raises(FranqError, match="^output: cannot write standard output: Broken pipe"):
        run(src, "-")


# ---------------------------------------------------------------------------- write failures
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EIO, errno.EDQUOT])
@pytest.mark.parametrize("at", ["write", "fsync"])
def test_write_failure_keeps_whole_lines_and_a_rerun_resumes(tmp_path, monkeypatch, code, at):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_input(src, 12)
    real = getattr(os, at)
    calls = {"n": 0}

    def failing(fd, *args):
        if fd >= 0 and os.fstat(fd).st_ino == os.stat(out).st_ino:
            calls["n"] += 1
            if calls["n"] == 4:
                if at == "write":  # half of the lines reach the disk, then the failure
                    real(fd, bytes(args[0])[: len(args[0]) // 2])
                raise OSError(code, os.strerror(code))
        return real(fd, *args)

    monkeypatch.setattr(os, at, failing)
    with pytest.raises(FranqError) as err:
        run(src, out, per_batch=2)
    message = str(err.value)
    assert message.startswith(f"output: cannot write {out}: {os.strerror(code)}") and "\n" not in message
    assert "rerun the same command to resume" in message
    kept = out_ids(out)  # every line whole (json.loads would fail on a torn one)
    assert kept == [f"r{i}" for i in range(6)]
    monkeypatch.setattr(os, at, real)
    summary = run(src, out)
    assert (summary.scored, summary.skipped, summary.recovered) == (6, 6, 0)
    ids = out_ids(out)
    assert sorted(ids) == sorted(f"r{i}" for i in range(12)) and len(ids) == len(set(ids))


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES, errno.ENOENT])
def test_output_that_cannot_be_opened_is_named(tmp_path, monkeypatch, code):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_input(src, 1)
    real = os.open

    def refusing(path, *args, **kw):
        if str(path) == str(out):
            raise OSError(code, os.strerror(code))
        return real(path, *args, **kw)

    monkeypatch.setattr(os, "open", refusing)
    with pytest.raises(FranqError, match=f"^output: cannot open {out} for appending: {os.strerror(code)}"):
        run(src, out)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_error_file_write_failure_is_named_and_output_stays_valid(tmp_path, monkeypatch, code):
    src, out, errs = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "errs.jsonl"
    src.write_text(json.dumps(record(0)) + "\n" + "not json\n" + json.dumps(record(2)) + "\n")

    class FullFile:
        def __init__(self, *a, **k):
            pass

        def write(self, text):
            raise OSError(code, os.strerror(code))

        flush = close = lambda self: None

    real_open = open

    def fake_open(path, mode="r", *a, **k):
        return FullFile() if str(path) == str(errs) else real_open(path, mode, *a, **k)

    monkeypatch.setattr(output_mod, "open", fake_open, raising=False)
    with pytest.raises(FranqError, match=f"^error file: cannot write {errs}: {os.strerror(code)}"):
        run(src, out, errs)
    assert all(json.loads(x)["id"] for x in out.read_text().splitlines())
    monkeypatch.undo()
    summary = run(src, out, errs)
    assert summary.bad == 1 and sorted(out_ids(out)) == ["r0", "r2"]


def test_error_file_that_cannot_be_opened_is_named_before_writing(tmp_path):
    src = tmp_path / "in.jsonl"
    write_input(src, 1)
    with pytest.raises(FranqError, match="^error file: cannot open .*no-dir/e.jsonl for writing"):
        run(src, tmp_path / "out.jsonl", tmp_path / "no-dir" / "e.jsonl")


# ---------------------------------------------------------------------------- damaged output lines
DAMAGE = {
    "truncated JSON": b'{"id": "r2", "answer": "Tow\n',
    "not UTF-8": b'{"id": "r2", "claims": [], "mode": "long", "answer": "\xff"}\n',
    "not an object": b'["r2"]\n',
    "no claims": b'{"id": "r2", "mode": "long"}\n',
    "id is a number": b'{"id": 2, "claims": [], "mode": "long"}\n',
    "NUL bytes": b"\x00" * 40 + b"\n",
    "only a prefix": b'{"id": "r2", \n',
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_damaged_middle_line_is_moved_aside_and_its_record_scored_again(tmp_path, kind):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_input(src, 5)
    run(src, out)
    lines = out.read_bytes().splitlines(keepends=True)
    damaged = b"".join(lines[:2]) + DAMAGE[kind] + b"".join(lines[3:])
    out.write_bytes(damaged)

    summary = run(src, out)

    assert (summary.scored, summary.skipped, summary.recovered) == (1, 4, 1)
    assert "1 damaged output line(s) moved to" in summary.message()
    recovery = Path(str(out) + ".recovered")
    assert recovery.read_bytes() == DAMAGE[kind], "the damaged line was not kept byte for byte"
    ids = out_ids(out)
    assert sorted(ids) == [f"r{i}" for i in range(5)] and len(ids) == 5
    assert run(src, out).recovered == 0  # the output is whole again


def test_torn_last_line_is_kept_in_the_recovery_file(tmp_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_input(src, 3)
    run(src, out)
    torn = b'{"id": "r9", "answer": "half'
    with open(out, "ab") as f:
        f.write(torn)
    summary = run(src, out)
    assert summary.recovered == 1 and summary.scored == 0
    assert Path(str(out) + ".recovered").read_bytes() == torn + b"\n"
    assert out_ids(out) == ["r0", "r1", "r2"]


def test_torn_first_write_is_recovered_not_mistaken_for_a_foreign_file(tmp_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_input(src, 2)
    out.write_bytes(b'{"id": "r0", "ans')
    assert run(src, out).scored == 2
    assert out_ids(out) == ["r0", "r1"]


def test_recovery_file_write_failure_leaves_the_output_as_it_was(tmp_path, monkeypatch):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_input(src, 3)
    run(src, out)
    damaged = out.read_bytes().replace(b'"r1"', b'"r1', 1)
    out.write_bytes(damaged)
    real_open = open

    def fake_open(path, mode="r", *a, **k):
        if str(path).endswith(".recovered"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_open(path, mode, *a, **k)

    monkeypatch.setattr(output_mod, "open", fake_open, raising=False)
    with pytest.raises(FranqError, match="^recovery file: cannot write .*No space left on device; .* was left as it was"):
        run(src, out)
    assert out.read_bytes() == damaged


def test_output_holding_no_franq_record_is_refused_untouched(tmp_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "notes.jsonl"
    write_input(src, 1)
    out.write_text('{"name": "my notes"}\n{"name": "more"}\n')
    with pytest.raises(FranqError, match="line 1: not a franq result line; use another output file"):
        run(src, out)
    assert out.read_text() == '{"name": "my notes"}\n{"name": "more"}\n'


# ---------------------------------------------------------------------------- signals at random points
def test_signals_at_random_points_lose_and_duplicate_nothing(tmp_path):
    """SIGKILL, SIGTERM and SIGINT at random moments of a run (seeded); each rerun resumes.
    After the last one the output holds every record exactly once."""
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    n = 150
    write_input(src, n, with_id=False)
    script = _script(f"s = run_jsonl(lambda: EchoRunner(delay=0.004, per_batch=3), {str(src)!r}, {str(out)!r}, "
                     f"progress=False)\nprint(s.scored, s.skipped, s.recovered)")
    rng = random.Random(18)
    for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGKILL):
        proc = subprocess.Popen(script, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.3, 0.9))
        proc.send_signal(sig)
        proc.communicate()
        with open(out, "ab") as f:  # and, sometimes, a torn write on top
            if rng.random() < 0.5:
                f.write(b'{"id": "sha1:torn", "answ')
    done = subprocess.run(script, cwd=ROOT, env=_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    ids = out_ids(out)
    assert len(ids) == n == len(set(ids)), "lost or duplicated records"
    recovered = Path(str(out) + ".recovered")
    assert not recovered.exists() or all(b"torn" in x for x in recovered.read_bytes().splitlines())


@pytest.mark.parametrize("flag", ["-o", "--scored", "--report"])
def test_calibrate_refuses_to_write_over_its_input(tmp_path, flag):
    from franq.cli import main

    src = tmp_path / "labelled.jsonl"
    data = write_input(src, 2)
    out = src if flag == "-o" else tmp_path / "cal.json"
    args = ["fit", "calibrator", str(src), "-o", str(out)] + ([] if flag == "-o" else [flag, str(src)])
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 1 and "is the same file as the input" in res.output, res.output
    assert src.read_bytes() == data
