"""A resumed output is written by the stack that wrote it: a run with another mode, model,
backend or calibrator is refused (its old records would be skipped, never rescored, and the
file would mix two stacks); the same command resumes as before."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import tiny_cli_args

from franq.cli import main
from franq.errors import InputError
from franq.runners.base import Scored
from franq.runners.local import run_jsonl

STACK = {"model": "m", "faithfulness": "lexical-v1", "uq_faith": "claim_prob", "uq_unfaith": "parametric",
         "prompt_version": "rag-v1", "mode": "long"}


def result(ident: str, stack=STACK, calibrator="cal.json") -> str:
    return json.dumps({"id": ident, "claims": [], "mode": "long", "stack": stack,
                       "calibrator": None if calibrator is None else {"path": calibrator}})


class FakeRunner:
    def __init__(self, lines):
        self.lines = lines

    def run(self, records):
        records = list(records)
        yield [Scored(r.line, r.id, line, 0) for r, line in zip(records, self.lines)]


def files(tmp_path, held: list[str]):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("".join(json.dumps({"id": f"r{i}", "question": "q", "passages": [], "answer": "a"}) + "\n"
                           for i in range(2)))
    out.write_text("".join(line + "\n" for line in held))
    return src, out


def test_an_output_of_another_preset_is_refused_before_any_model_loads(tmp_path):
    src, out = files(tmp_path, [result("r0", {**STACK, "mode": "fast"})])
    before, loaded = out.read_text(), []
    with pytest.raises(InputError) as err:
        run_jsonl(lambda: loaded.append(1), str(src), str(out), progress=False, presets=["long"], mode="long")
    msg = str(err.value)
    assert "['fast']" in msg and "mode 'long'" in msg and "another output file" in msg and "\n" not in msg
    assert loaded == [] and out.read_text() == before


@pytest.mark.parametrize("stack, calibrator, named", [
    ({**STACK, "faithfulness": "verifier:v7"}, "cal.json", "faithfulness: 'lexical-v1' -> 'verifier:v7'"),
    (STACK, None, "calibrator: 'cal.json' -> None"),
])
def test_results_of_another_stack_for_the_same_preset_are_not_written(tmp_path, stack, calibrator, named):
    src, out = files(tmp_path, [result("r0")])
    before = out.read_text()
    with pytest.raises(InputError, match="Nothing of this run was written") as err:
        run_jsonl(lambda: FakeRunner([result("r1", stack, calibrator)]), str(src), str(out), progress=False,
                  presets=["long"], mode="long")
    assert named in str(err.value) and out.read_text() == before


def test_the_same_stack_resumes(tmp_path):
    src, out = files(tmp_path, [result("r0")])
    summary = run_jsonl(lambda: FakeRunner([result("r1")]), str(src), str(out), progress=False,
                        presets=["long", "observer"], mode="auto")
    assert (summary.scored, summary.skipped) == (1, 1)
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["r0", "r1"]


def test_the_command_refuses_to_resume_a_long_output_with_fast(tmp_path, tiny_lm_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(json.dumps({"question": "Where is it?", "passages": ["It is in Paris."],
                               "answer": "It is in Paris. It is tall."}) + "\n")
    first = CliRunner().invoke(main, ["score", str(src), "-o", str(out), "--quiet", *tiny_cli_args(tiny_lm_path)])
    assert first.exit_code == 0, first.output
    src.write_text(src.read_text() + json.dumps({"question": "Q?", "passages": ["P."], "answer": "A b c."}) + "\n")
    again = CliRunner().invoke(main, ["score", str(src), "-o", str(out), "--quiet", "--fast",
                                      "--faithfulness", "lexical"])
    assert again.exit_code != 0 and "holds results of preset(s) ['long']" in again.output
    assert len(out.read_text().splitlines()) == 1


def moved(ident: str, prior) -> str:
    """A result line of today's schema: its calibrator records the share it was moved to (None: as fitted)."""
    obj = json.loads(result(ident))
    obj["calibrator"]["prior"] = prior
    return json.dumps(obj)


@pytest.mark.parametrize("held, new, refused", [
    (moved("r0", 0.8), moved("r1", 0.9), "calibrator moved to prior: 0.8 -> 0.9"),
    (moved("r0", None), moved("r1", 0.9), "calibrator moved to prior: None -> 0.9"),
    (moved("r0", 0.9), moved("r1", 0.9), None),
    (result("r0"), moved("r1", 0.9), None),  # written before results recorded a prior: not known to differ
])
def test_the_same_calibrator_at_another_prior_is_another_stack(tmp_path, held, new, refused):
    src, out = files(tmp_path, [held])
    before = out.read_text()

    def run():
        return run_jsonl(lambda: FakeRunner([new]), str(src), str(out), progress=False, presets=["long"], mode="long")

    if refused is None:
        assert run().scored == 1 and len(out.read_text().splitlines()) == 2
        return
    with pytest.raises(InputError, match="Nothing of this run was written") as err:
        run()
    assert refused in str(err.value) and out.read_text() == before
