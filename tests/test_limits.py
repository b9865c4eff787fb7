"""Bounded work: one table of limits (franq.limits) checked before any work,
through the real CLI; CSV cells escaped against formula injection; the limits table in
docs/batch.md is the one in franq.limits. Hostile inputs are scaled down: what is
counted is work (tokenizer calls, model loads), never time."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import franq
from franq.cli import main
from franq.config import FranqConfig
from franq.errors import InputError
from franq.limits import LIMITS, LimitError, Limits, markdown_table

ROOT = Path(__file__).resolve().parents[1]
Q, A = "Where is the Eiffel Tower?", "It is in Paris."


@pytest.fixture
def no_model(monkeypatch):
    """Loading a model is a failure: the limits must refuse before it."""
    from franq.lm import CausalLM

    def refuse(*args, **kwargs):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(CausalLM, "load", classmethod(refuse))


def one_line_error(res, *needles):
    assert res.exit_code == 1, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


# ---------------------------------------------------------------- settings, before the model loads
@pytest.mark.parametrize("setting, flags, needles", [
    ({"model": {"threads": 1_000_000}}, [], ["'model.threads' has 1000000 threads", "[limits] threads = N"]),
    ({}, ["--threads", "1000000"], ["'model.threads' has 1000000 threads", "--limit threads=N"]),
    ({"uq": {"n_samples": 10**9}}, [], ["'uq.n_samples' has 1000000000 samples", "limits] samples = N"]),
    ({"uq": {"n_samples": 1e9}}, [], ["'uq.n_samples': expected an integer"]),
    ({"model": {"max_new_tokens": 10**7}}, [], ["'model.max_new_tokens' is 10000000 tokens"]),
    ({"uq": {"max_sample_tokens": 10**7}}, [], ["'uq.max_sample_tokens' is 10000000 tokens"]),
    ({"limits": {"threads": 0}}, [], ["limit 'threads' must be a whole number >= 1"]),
    ({"limits": {"passage": 3}}, [], ["unknown limit 'passage'"]),
])
def test_settings_over_a_limit_end_in_one_line_before_the_model_loads(tmp_path, no_model, setting, flags, needles):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps(setting))
    for command in (["score", "--example"], ["answer", "-q", Q, "-p", "Paris."]):
        res = CliRunner().invoke(main, [*command, "--config", str(cfg), *flags])
        one_line_error(res, *needles)


def test_a_limit_raised_in_the_config_or_with_limit_lets_the_setting_through(tmp_path):
    cfg = tmp_path / "cfg.toml"
    cfg.write_text("[model]\nthreads = 300\n\n[limits]\nthreads = 512\n")
    assert FranqConfig.from_file(cfg).model.threads == 300
    with pytest.raises(LimitError, match="raise it with"):
        FranqConfig.from_dict({"model": {"threads": 300}})
    from franq.cli.options import config_from_flags

    assert config_from_flags(threads=300, limits=(("threads", 400),)).limits["threads"] == 400
    assert config_from_flags(str(cfg), limits=(("threads", 1000),)).limits["threads"] == 1000  # over the file
    with pytest.raises(LimitError, match="'model.threads' has 300 threads, over the limit of 100"):
        config_from_flags(str(cfg), limits=(("threads", 100),))  # --limit lowers a limit too


def test_limit_option_parses_name_equals_number(no_model):
    for bad in ("passages", "nope=3", "passages=0", "passages=many"):
        res = CliRunner().invoke(main, ["score", "--example", "--limit", bad])
        assert res.exit_code == 2 and "Invalid value for '--limit'" in res.output, res.output
    res = CliRunner().invoke(main, ["score", "--example", "--limit", "passages=1", "--limit", "answer_chars=5"])
    one_line_error(res, "bundled example: 'passages' has")


def test_max_new_tokens_and_inputs_of_franq_answer_are_checked_before_the_model_loads(no_model):
    one_line_error(CliRunner().invoke(main, ["answer", "-q", Q, "-p", "Paris.", "--max-new-tokens", "100000"]),
                   "--max-new-tokens is 100000 tokens, over the limit of 8192")
    one_line_error(CliRunner().invoke(main, ["answer", "-q", Q, "-p", "P" * 100_001]),
                   "'passages[0]' is 100001 characters")


# ---------------------------------------------------------------- records, at parse time
def test_a_record_with_a_million_passages_is_refused_at_parse_time_in_bounded_memory(tmp_path):
    """In a subprocess capped at 600 MB of address space: the line is read, its passage
    list counted and refused; no Passage object is built, no tokenizer runs."""
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": "big", "question": Q, "answer": A, "passages": ["x"] * 1_000_000}) + "\n"
                   + json.dumps({"id": "ok", "question": Q, "answer": A, "passages": ["Paris."]}) + "\n")
    code = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (600 * 2**20, 600 * 2**20))
        import franq.types
        built = []
        class Counting(franq.types.Passage):
            def __init__(self, *a, **k):
                built.append(1)
                super().__init__(*a, **k)
        import franq.io
        franq.io.Passage = Counting
        from franq.runners.records import RecordReader
        with open({str(src)!r}, "rb") as f:
            items = list(RecordReader().read(f))
        print(repr(getattr(items[0], "reason", None)), type(items[1]).__name__, len(built),
              "torch" in sys.modules, "transformers" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "line 1: 'passages' has 1000000 passages, over the limit of 1000" in out.stdout, out.stdout[-2000:]
    assert out.stdout.split()[-4:] == ["Record", "1", "False", "False"], out.stdout[-2000:]


def test_batch_records_over_each_limit_become_error_records_naming_the_limit(tmp_path, tiny_lm_path):
    rows = [
        ("many passages", {"passages": ["p"] * 30}, "'passages' has 30 passages, over the limit of 20"),
        ("long passage", {"passages": ["x" * 600]}, "'passages[0]' is 600 characters, over the limit of 500"),
        ("long title", {"passages": [{"title": "t" * 590, "text": "xx"}]}, "'passages[0]' is 592 characters"),
        ("context", {"passages": ["y" * 400] * 3}, "'passages' together is 1200 characters, over the limit of 1000"),
        ("long answer", {"answer": "a " * 400}, "'answer' is 800 characters, over the limit of 700"),
        ("long question", {"question": "q" * 300}, "'question' is 300 characters, over the limit of 200"),
        ("many claims", {"claims": ["It is in Paris."] * 6}, "'claims' has 6 claims, over the limit of 5"),
        ("long claim", {"claims": ["c" * 90]}, "'claims[0]' is 90 characters, over the limit of 80"),
    ]
    lines = [json.dumps({"id": name, "question": Q, "passages": ["Paris."], "answer": A, **fields})
             for name, fields, _ in rows] + [json.dumps({"id": "fine", "question": Q, "passages": ["Paris."],
                                                         "answer": A})]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n")
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(f'[model]\npath = "{tiny_lm_path}"\ndevice = "cpu"\n\n[faithfulness]\nname = "lexical"\n\n'
                   "[calibration]\ncalibrator = \"none\"\n\n[limits]\npassages = 20\ncontext_chars = 1000\n"
                   "answer_chars = 700\nquestion_chars = 200\n")
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(main, ["score", str(src), "-o", str(out), "--config", str(cfg), "--quiet",
                                    "--limit", "passage_chars=500", "--limit", "claims=5", "--limit", "claim_chars=80"])
    assert res.exit_code == 0, res.output
    errors = {e["id"]: e["error"] for e in map(json.loads, (tmp_path / "out.jsonl.errors.jsonl").read_text().splitlines())}
    for name, _, reason in rows:
        assert reason in errors[name] and "--limit" in errors[name], (name, errors.get(name))
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["fine"]


def test_many_tiny_passages_end_in_give_fewer_passages_after_a_few_tokenizer_calls(tmp_path, tiny_lm_path,
                                                                                    monkeypatch):
    """The batch line that took 132 s (3,000 tiny passages), scaled to 600 passages and
    a 512-token model: the error comes after a few whole-prompt tokenizations (and the
    batcher's estimate, one per passage), not one whole prompt per passage."""
    from franq.lm import CausalLM

    chars = []  # characters tokenized per call
    encode, encode_many = CausalLM.encode, CausalLM.encode_many
    monkeypatch.setattr(CausalLM, "encode", lambda self, text: chars.append(len(text)) or encode(self, text))
    monkeypatch.setattr(CausalLM, "encode_many",
                        lambda self, texts: chars.append(sum(map(len, texts))) or encode_many(self, texts))
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": "tiny", "question": Q, "answer": A,
                               "passages": [{"title": f"T{i}", "text": "x"} for i in range(600)]}) + "\n")
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"model": {"path": str(tiny_lm_path), "device": "cpu"},
                               "faithfulness": {"name": "lexical"}, "calibration": {"calibrator": "none"}}))
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(main, ["score", str(src), "-o", str(out), "--config", str(cfg), "--quiet"])
    assert res.exit_code == 0, res.output
    error = json.loads((tmp_path / "out.jsonl.errors.jsonl").read_text())["error"]
    assert "the headers of the 600 passages" in error and "give fewer passages" in error
    prompt = sum(len(f"[{i}] T{i}\nx\n\n") for i in range(600))  # the passages block, about 6,600 characters
    assert sum(chars) <= 12 * prompt, sum(chars)  # a few whole prompts; the old rule: ~600 (about 4 million)
    assert sum(c > prompt for c in chars) <= 10  # whole-prompt tokenizations: O(log passages)


def test_the_api_checks_limits_before_any_work(tiny_lm, monkeypatch):
    from conftest import make_franq

    fr = make_franq(tiny_lm, {"limits": {"passages": 3, "claims": 2}})
    monkeypatch.setattr(type(tiny_lm), "encode", lambda *a: pytest.fail("tokenized"))
    monkeypatch.setattr(type(tiny_lm), "encode_answer", lambda *a: pytest.fail("tokenized"))
    with pytest.raises(LimitError, match="'passages' has 4 passages, over the limit of 3"):
        fr.score(Q, ["a", "b", "c", "d"], A)
    with pytest.raises(LimitError, match=r"examples\[1\]: 'claims' has 3 claims"):
        fr.score_many([franq.Example(Q, (franq.Passage("p"),), A),
                       franq.Example(Q, (franq.Passage("p"),), A, claims=("a", "b", "c"))])
    with pytest.raises(LimitError, match="max_new_tokens is 9000 tokens"):
        fr.answer(Q, ["p"], max_new_tokens=9000)


def test_decomposed_claims_are_bounded_too(tiny_lm):
    from conftest import make_franq

    fr = make_franq(tiny_lm, {"limits": {"claims": 2}, "decomposer": {"name": "sentence"}})
    with pytest.raises(LimitError, match="the answer \\(decomposed\\) has 3 claims, over the limit of 2"):
        fr.score(Q, ["It is in Paris."], "It is in Paris. It is tall. It is old.")


def test_threads_beyond_the_limit_never_reach_torch(monkeypatch):
    import torch

    from franq.lm.threads import configure_threads

    monkeypatch.setattr(torch, "set_num_threads", lambda n: pytest.fail(f"torch asked for {n} threads"))
    with pytest.raises(LimitError, match="threads has 1000000 threads"):
        configure_threads(1_000_000)


def test_limits_mapping():
    limits = Limits.of({"passages": 5})
    assert limits["passages"] == 5 and limits["claims"] == LIMITS["claims"].default
    assert list(limits) == list(LIMITS) and hash(limits) == hash(Limits.of({"passages": 5}))
    with pytest.raises(InputError, match="expected a table"):
        Limits.of([1])
    assert FranqConfig.from_dict(FranqConfig.from_dict({"limits": {"passages": 5}}).to_dict()).limits == limits


# ---------------------------------------------------------------- docs
def test_docs_batch_md_shows_the_table_of_limits():
    doc = (ROOT / "docs" / "batch.md").read_text(encoding="utf-8")
    assert markdown_table() in doc
    for name in LIMITS:
        assert f"--limit {name}=N" in doc


# ---------------------------------------------------------------- CSV formula injection
HOSTILE = ["=HYPERLINK(\"http://x\",\"y\")", "+1+2", "-2+3+cmd|' /C calc'!A0", "@SUM(A1:A2)", "\tx", "\rx"]


@pytest.fixture
def scores_file(tmp_path, tiny_lm):
    from conftest import make_franq

    example = franq.Example.from_dict({
        "id": "=1+1", "question": Q, "passages": ["It is in Paris."], "answer": "It is in Paris.",
        "claims": ["It is in Paris."],
        "meta": {f"m{i}": text for i, text in enumerate(HOSTILE)} | {"num": "-0.5", "neg": -0.5, "sci": "-1e-3",
                                                                      "inner": "a\rb,\nc"}})
    result = make_franq(tiny_lm).score_many([example])[0]
    path = tmp_path / "scores.jsonl"
    path.write_text(json.dumps(franq.result_record(example.id, result, example)) + "\n")
    return path


def test_report_csv_escapes_formula_cells_and_keeps_numbers(tmp_path, scores_file):
    out = tmp_path / "claims.csv"
    res = CliRunner().invoke(main, ["report", str(scores_file), "--csv", str(out)])
    assert res.exit_code == 0, res.output
    row = next(csv.DictReader(open(out, newline="", encoding="utf-8")))
    assert row["id"] == "'=1+1"
    for i, text in enumerate(HOSTILE):
        assert row[f"meta.m{i}"] == "'" + text
    assert (row["meta.num"], row["meta.neg"], row["meta.sci"]) == ("-0.5", "-0.5", "-1e-3")
    assert row["meta.inner"] == "a\rb,\nc"  # a carriage return inside a cell is quoted, not a line break
    assert not row["p_true"].startswith("'") and float(row["p_true"]) >= 0
    negative = [k for k, v in row.items() if k.startswith("signal.") and v.startswith("-")]
    assert negative, row  # log-probability signals are negative numbers, written as numbers
    raw = tmp_path / "raw.csv"
    assert CliRunner().invoke(main, ["report", str(scores_file), "--csv", str(raw), "--raw-csv"]).exit_code == 0
    row = next(csv.DictReader(open(raw, newline="", encoding="utf-8")))
    assert row["id"] == "=1+1" and [row[f"meta.m{i}"] for i in range(len(HOSTILE))] == HOSTILE


def test_score_format_csv_escapes_too(tmp_path, tiny_lm_path):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"model": {"path": str(tiny_lm_path), "device": "cpu"},
                               "faithfulness": {"name": "lexical"}, "calibration": {"calibrator": "none"}}))
    args = ["score", "-q", Q, "-p", "It is in Paris.", "-a", "=cmd It is in Paris.", "--config", str(cfg),
            "--format", "csv", "--quiet"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    texts = [r["text"] for r in csv.DictReader(io.StringIO(res.output))]
    assert texts and all(not t.startswith("=") for t in texts) and texts[0].startswith("'=")
    res = CliRunner().invoke(main, [*args, "--raw-csv"])
    assert [r["text"] for r in csv.DictReader(io.StringIO(res.output))][0].startswith("=")
