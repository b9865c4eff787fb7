"""franq/results.py and the typed stack: an output line written by result_record reads back
(franq.read_results) as the same AnswerScore, every field validated; Stack is written as
the same dict it replaced."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import franq
from conftest import make_franq
from franq.errors import InputError
from franq.io import Example
from franq.types import Decision, Passage, Stack

QUESTION = "When was the Eiffel Tower built?"
PASSAGES = ("The Eiffel Tower was built from 1887 to 1889 in Paris.", "Gustave Eiffel designed it.")
ANSWER = "The Eiffel Tower was built from 1887 to 1889. It is in Paris. Hello!"
SHORT = {"mode": "short", "uq": {"n_samples": 3, "max_sample_tokens": 6, "short_scoring": "in_policy"}}


def _line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False)  # as `franq score` writes it


@pytest.fixture(scope="module")
def results(tiny_lm):
    long = make_franq(tiny_lm, {"calibration": {"threshold": 0.5}}).score(QUESTION, list(PASSAGES), ANSWER)
    short = make_franq(tiny_lm, SHORT).score(QUESTION, list(PASSAGES), "1889")
    return long, short


def test_result_record_reads_back_as_the_same_answer_score(results):
    for result in results:
        assert next(franq.read_results([_line(franq.result_record("x", result))])) == result


def test_a_record_not_yet_written_as_json_reads_back_too(results):
    """``result_record`` keeps tuples where JSON has lists: the reader takes both."""
    for result in results:
        assert next(franq.read_results(franq.result_record("x", result))) == result


def test_a_line_read_back_with_its_input_is_written_again_byte_for_byte(results, tmp_path):
    long, short = results
    example = Example(QUESTION, tuple(Passage(p, title="t") for p in PASSAGES), ANSWER, id="a1",
                      claim_labels=({"is_true": True, "is_faithful": None}, {}, {"is_true": False}),
                      labels={"gold_answers": ["1889"], "sufficient": True}, meta={"user": "ann", "n": [1, 2]})
    decided = dataclasses.replace(long, decision=Decision("fallback", "other", "p_true", 0.2, 0.5, "closed_book",
                                                          fallback_answer="other"))
    lines = [_line(franq.result_record("a1", decided, example)), _line(franq.result_record(None, short))]
    path = tmp_path / "out.jsonl"
    path.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    read = list(franq.read_results(path, with_input=True))
    assert [r.where for r in read] == [f"{path} line 1", f"{path} line 2"]
    assert read[0].result == decided and read[0].id == "a1" and read[0].example.meta == example.meta
    assert read[0].example.passages == example.passages and read[1].example is None
    assert [_line(franq.result_record(r.id, r.result, r.example)) for r in read] == lines


def test_stack_is_written_as_the_dict_it_replaced(results):
    long, short = results
    assert isinstance(long.stack, Stack) and long.stack["mode"] == "long" and long.stack.get("sampling") is None
    assert list(long.stack) == ["model", "faithfulness", "uq_faith", "uq_unfaith", "prompt_version", "mode"]
    assert list(short.stack)[6:] == ["equivalence", "sampling"] and short.stack.sampling.startswith("n=3,")
    record = franq.result_record("x", short)
    assert record["stack"] == dict(short.stack) == short.stack and type(record["stack"]) is dict
    assert json.dumps(record["stack"]) == json.dumps(short.stack.to_dict())
    assert {short.stack: 1}[Stack.from_dict(dict(short.stack))] == 1  # frozen: hashable, equal by value


def test_stack_keeps_extra_keys_in_their_order():
    written = {"model": "m", "faithfulness": "f", "uq_faith": "a", "uq_unfaith": "b", "prompt_version": "p",
               "mode": "probe", "sampling": "n=2", "judge": "j", "equivalence": "e"}
    stack = Stack.from_dict(written)
    assert list(stack.to_dict().items()) == list(written.items()) and stack["judge"] == "j"
    built = Stack.build(model="m", faithfulness="f", uq_faith="a", uq_unfaith="b", mode="long", prompt_version="p")
    assert built.to_dict() == {k: written[k] for k in list(written)[:5]} | {"mode": "long"}


@pytest.mark.parametrize("change, message", [
    (lambda r: r["claims"][0].update(status="ok"), "line 1: 'claims[0].status' must be one of ['scored', "),
    (lambda r: r["claims"][0].update(p_faithful="high"), "line 1: 'claims[0].p_faithful' must be a number or null, "
                                                         "got 'high'"),
    (lambda r: r["claims"][0]["claim"].update(char_spans=[[0]]), "'claims[0].claim.char_spans[0]' must be a "),
    (lambda r: r["claims"][0].update(verdict="maybe"), "'claims[0].verdict' must be one of ['likely_true', "),
    (lambda r: r["claims"][0].update(is_true="yes"), "'claims[0].is_true' must be true, false or null, got 'yes'"),
    (lambda r: r.update(mode="medium"), "line 1: 'mode' must be one of ['long', 'short'], got 'medium'"),
    (lambda r: r["stack"].pop("uq_faith"), "line 1: 'stack' has no ['uq_faith']"),
    (lambda r: r["stack"].update(mode=3), "line 1: 'stack.mode' must be a string, got int"),
    (lambda r: r.update(warnings="w"), "line 1: 'warnings' must be a list, got 'w'"),
    (lambda r: r.pop("stack"), "line 1: missing field 'stack'"),
    (lambda r: r.update(schema=3), "line 1: 'schema' must be 2 (or absent: franq 0.1 output), got 3"),
    (lambda r: r.update(schema="2"), "line 1: 'schema' must be 2 (or absent: franq 0.1 output), got '2'"),
    (lambda r: r.update(decision={"action": "shrug"}), "line 1: 'decision.action' must be one of ['answer', "),
])
def test_errors_name_the_line_and_the_field(results, change, message):
    record = json.loads(_line(franq.result_record("x", results[0])))
    change(record)
    with pytest.raises(InputError) as err:
        list(franq.read_results([_line(record)]))
    assert message in str(err.value) and str(err.value).startswith("line 1: "), str(err.value)


def test_other_lines_are_skipped_and_reported_with_on_skip(results):
    good = _line(franq.result_record("x", results[0]))
    lines = [good, "{broken", _line({"line": 2, "id": None, "error": "bad"}), "", "[1]", _line({"answer": "a"})]
    skipped: list[str] = []
    assert list(franq.read_results(lines, on_skip=skipped.append)) == [results[0]]
    assert skipped == ["line 2: not valid JSON (Expecting property name enclosed in double quotes: line 1 "
                       "column 2 (char 1))", "line 3: an error record, not a result",
                       "line 5: expected a JSON object, got list",
                       "line 6: not a franq result record (no 'answer' and 'claims')"]
    with pytest.raises(InputError, match="^line 2: not valid JSON"):
        list(franq.read_results(lines))


PREVIOUS = Path(__file__).parent / "fixtures" / "result-0.1-example.jsonl"
"""One line of ``franq score --example --format json`` written by franq 0.1 (commit 94c7884):
the previous output schema, three-condition calibrated by the shipped calibrator."""


def test_a_line_of_the_previous_schema_reads_into_todays_names():
    old = json.loads(PREVIOUS.read_text(encoding="utf-8"))
    assert "schema" not in old  # franq 0.1 wrote none
    line = next(franq.read_results(PREVIOUS, with_input=True))
    result = line.result
    assert result.stack.model == old["model"] and result.stack.faithfulness == old["faithfulness"]
    assert result.calibration == old["calibration"] == "three-condition" == result.calibrator.variant
    assert line.example.passages and line.id == old["id"]
    for c, o in zip(result.claims, old["claims"]):
        assert c.p_faithful == o["p_faithful"] == o["p_supported"]
        assert (c.p_contradicted, c.p_not_mentioned) == (o["p_contradicted"], o["p_not_mentioned"])
        assert (c.p_true_raw, c.p_true_calibrated, c.signals) == (o["p_true_raw"], o["p_true_calibrated"], o["signals"])
        # a three-condition calibrator's maps: P(true | supported / contradicted / not mentioned)
        assert c.p_true_if_supported_calibrated == o["p_true_if_faithful_calibrated"]
        assert c.p_true_if_contradicted_calibrated == o["p_true_if_contradicted_calibrated"]
        assert c.p_true_if_not_mentioned_calibrated == o["p_true_if_unfaithful_calibrated"]
        assert c.p_true_if_unfaithful_calibrated is None
    again = franq.result_record(line.id, result, line.example)
    assert again["schema"] == 2 and not {"model", "faithfulness", "calibration"} & set(again)
    assert "p_supported" not in again["claims"][0] and "p_true_if_faithful_calibrated" not in again["claims"][0]
    assert next(franq.read_results([_line(again)])) == result


def test_a_binary_calibrated_line_of_the_previous_schema_keeps_p_true_if_unfaithful():
    old = json.loads(PREVIOUS.read_text(encoding="utf-8"))
    for c in old["claims"]:  # as a binary calibrator wrote it: no contradicted map
        c["p_true_if_contradicted_calibrated"] = None
    result = next(franq.read_results(old))
    for c, o in zip(result.claims, old["claims"]):
        assert c.p_true_if_supported_calibrated == o["p_true_if_faithful_calibrated"]
        assert c.p_true_if_unfaithful_calibrated == o["p_true_if_unfaithful_calibrated"]
        assert c.p_true_if_not_mentioned_calibrated is None


def test_every_line_names_its_schema(results):
    record = franq.result_record("x", results[0])
    assert list(record)[:2] == ["schema", "id"] and record["schema"] == 2
    assert not {"model", "faithfulness", "calibration"} & set(record)
