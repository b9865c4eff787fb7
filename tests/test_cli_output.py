"""The rough edges a new user hit (issue 28): files named by options checked before the
model loads, --threshold shown, report inputs that hold no scored records, provenance of
every P(true), empty passages, help defaults that cannot drift, tiny samples flagged."""
from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from franq.cli import main

GOOD = {"question": "When was the Eiffel Tower built?",
        "passages": ["The Eiffel Tower was built from 1887 to 1889."],
        "answer": "It was built from 1887 to 1889 [1]. It is in Paris."}


@pytest.fixture
def no_model_load(monkeypatch):
    """Fail the test if anything starts loading a model."""
    from franq.lm import load as lm_load
    from franq.pipeline import Franq

    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded before the named files were checked")

    monkeypatch.setattr(Franq, "from_config", classmethod(refuse))
    monkeypatch.setattr(lm_load, "load_pretrained", refuse)


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize("command", [
    ["score", "--example"],
    ["answer", "-q", "Who?", "-p", "A passage."],
])
@pytest.mark.parametrize("flag, value, says", [
    ("--calibrator", "/tmp/franq-no-such-calibrator.json", "--calibrator"),
    ("--model", "/nonexistent", "--model"),
    ("--gguf-file", "/nonexistent/model.gguf", "--gguf-file"),
])
def test_a_missing_file_named_by_an_option_fails_before_the_model_loads(no_model_load, command, flag, value, says):
    result = run(*command, flag, value)
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert says in lines[0] and value.split("/")[-1] in lines[0]


def test_a_batch_checks_the_named_files_before_the_model_loads_and_after_its_paths(no_model_load, tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(GOOD) + "\n")
    out = tmp_path / "out.jsonl"
    result = run("score", str(src), "-o", str(out), "--calibrator", str(tmp_path / "nope.json"))
    assert result.exit_code != 0 and "--calibrator" in result.output and "nope.json" in result.output
    assert not out.exists()
    result = run("score", str(src), "-o", str(src), "--calibrator", str(tmp_path / "nope.json"))
    assert result.exit_code != 0 and "nope.json" not in result.output  # the path mistake is the one named


def test_a_broken_calibrator_probe_or_map_in_the_config_fails_before_the_model_loads(no_model_load, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"variant": 5}')
    for key, table, says in [("calibrator", "calibration", "calibrator"),
                             ("probe_file", "model", "probe"),
                             ("map", "faithfulness", "map")]:
        cfg = tmp_path / f"{key}.json"
        cfg.write_text(json.dumps({table: {key: str(broken)}}))
        result = run("score", "--example", "--config", str(cfg))
        assert result.exit_code != 0, key
        assert says in result.output and "broken.json" in result.output, result.output
        missing = tmp_path / f"{key}-missing.json"
        cfg.write_text(json.dumps({table: {key: str(missing)}}))
        result = run("score", "--example", "--config", str(cfg))
        assert result.exit_code != 0 and missing.name in result.output
        assert "no file at" in result.output or "cannot read" in result.output


def test_a_backend_setting_naming_a_missing_path_fails_before_the_model_loads(no_model_load, tmp_path):
    cfg = tmp_path / "nli.toml"
    cfg.write_text('[faithfulness]\nname = "nli"\n[faithfulness.nli]\nmodel = "/nonexistent/deberta"\n')
    result = run("score", "--example", "--config", str(cfg))
    assert result.exit_code != 0 and "[faithfulness.nli] model" in result.output
    assert "/nonexistent/deberta" in result.output


# ---------------------------------------------------------------- --threshold, report, provenance
@pytest.fixture(scope="module")
def scored(tiny_lm_path, tmp_path_factory):
    """A batch input and its `franq score` output, from the tiny model."""
    root = tmp_path_factory.mktemp("scored")
    batch = root / "batch.jsonl"
    batch.write_text(json.dumps(GOOD | {"id": "a"}) + "\n")
    out = root / "scores.jsonl"
    result = run("score", str(batch), "-o", str(out), "--model", str(tiny_lm_path), "--quiet")
    assert result.exit_code == 0, result.output
    return batch, out


def test_threshold_adds_a_verdict_column_to_the_default_table(tiny_lm_path):
    args = ["score", "-q", GOOD["question"], "-p", GOOD["passages"][0], "-a", GOOD["answer"],
            "--model", str(tiny_lm_path), "--quiet"]
    plain = run(*args).output
    assert "verdict" not in plain
    table = run(*args, "--threshold", "0.95").output
    header = next(line for line in table.splitlines() if line.lstrip().startswith("#"))
    assert "verdict" in header
    rows = [line for line in table.splitlines() if line[:2].strip().isdigit()]
    assert rows and all("likely_true" in r or "likely_false" in r for r in rows)
    assert "P(true) >= 0.95" in table


def test_the_table_says_which_scorers_backend_and_calibrator_produced_p_true(tiny_lm_path):
    table = run("score", "-q", GOOD["question"], "-p", GOOD["passages"][0], "-a", GOOD["answer"],
                "--model", str(tiny_lm_path), "--quiet").output
    footer = next(line for line in table.splitlines() if line.startswith("scored by:"))
    assert "UQ_faith claim_prob / UQ_unfaith parametric" in footer
    assert "faithfulness verifier" in footer and "calibrator: uncalibrated" in footer


def test_the_decision_line_of_answer_says_what_produced_p_true(tiny_lm_path):
    result = run("answer", "-q", GOOD["question"], "-p", GOOD["passages"][0], "--model", str(tiny_lm_path),
                 "--max-new-tokens", "4", "--verify", "trivial", "--quiet")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Decision: "))
    after = "\n".join(lines[at:])
    assert "UQ_faith" in after and "UQ_unfaith" in after and "faithfulness" in after
    assert "calibrator: uncalibrated" in after


def test_report_csv_with_a_threshold_fills_the_verdict_column(scored, tmp_path):
    import csv

    _, out = scored
    path = tmp_path / "c.csv"
    result = run("report", str(out), "--csv", str(path), "--threshold", "0.5")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(path.open()))
    assert rows and all(r["verdict"] in ("likely_true", "likely_false") for r in rows if r["status"] == "scored")
    assert all((r["verdict"] == "likely_true") == (float(r["p_true"]) >= 0.5) for r in rows if r["status"] == "scored")
    assert {r["uq_faith_scorer"] for r in rows} == {"claim_prob"} and {r["calibrator"] for r in rows} == {"uncalibrated"}
    run("report", str(out), "--csv", str(path))  # no threshold given: the verdicts the claims were scored with
    assert {r["verdict"] for r in csv.DictReader(path.open())} == {""}


def test_report_given_an_unscored_input_file_says_it_holds_no_scored_records(scored, tmp_path):
    batch, out = scored
    html = tmp_path / "r.html"
    result = run("report", str(batch), "-o", str(html))
    assert result.exit_code != 0 and not html.exists()
    message = result.output.splitlines()[-1]
    assert f"{batch} holds no scored records" in message and "'claims'" in message and "franq score" in message
    result = run("report", str(out), str(batch), "-o", str(html))  # one good file does not hide the other
    assert result.exit_code != 0 and f"{batch} holds no scored records" in result.output


# ---------------------------------------------------------------- no passages: closed-book
CLOSED = {"question": "Who designed the Eiffel Tower?", "passages": [],
          "answer": "Gustave Eiffel designed it. It is in Paris."}


def test_an_empty_passages_list_is_accepted_by_every_reader():
    from franq.io import parse_example, parse_passages
    from franq.runners.records import parse_record

    assert parse_passages([]) == ()
    assert parse_example(CLOSED).passages == ()
    assert parse_record(json.dumps(CLOSED), 1).passages == ()


class Refuses:
    """A faithfulness backend that must not be asked about an answer without passages."""

    name = "refuses"
    needs = frozenset()

    def predict(self, pairs, evidence=None):
        raise AssertionError(f"asked about {len(pairs)} claims without passages")


@pytest.mark.parametrize("config", [
    {},
    {"faithfulness": {"name": "combined"}},
    {"faithfulness": {"name": "context_pmi"}},
    {"mode": "short", "uq": {"n_samples": 3, "max_sample_tokens": 4}},
    {"mode": "short", "uq": {"n_samples": 3, "max_sample_tokens": 4, "short_scoring": "in_policy"}},
    {"mode": "short", "uq": {"n_samples": 3, "max_sample_tokens": 4, "unfaith_samples": "closed"}},
], ids=["long-lexical", "long-combined", "long-context_pmi", "short-observer", "short-in_policy", "short-closed"])
def test_an_answer_without_passages_is_scored_closed_book(tiny_lm, make_franq, config):
    from franq.io import parse_example

    with_passages = parse_example(GOOD)
    result, other = make_franq(tiny_lm, config).score_many([parse_example(CLOSED), with_passages])
    scored = result.scored
    assert scored and all(c.p_faithful == 0.0 for c in scored)  # nothing supports a claim
    assert all(c.p_true_raw == pytest.approx(c.uq_unfaith) for c in scored)  # P(true) is UQ_unfaith
    assert other.scored  # the answer beside it, with passages, is scored as before


def test_a_backend_is_never_asked_about_an_answer_without_passages(tiny_lm, make_franq):
    from franq.io import parse_example

    [result] = make_franq(tiny_lm, faithfulness=Refuses()).score_many([parse_example(CLOSED)])
    assert result.scored and all(c.p_faithful == 0.0 for c in result.scored)


def test_a_batch_line_without_passages_is_scored_and_the_report_says_no_passages(tiny_lm_path, tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(CLOSED | {"id": "closed"}) + "\n")
    out, html = tmp_path / "out.jsonl", tmp_path / "r.html"
    result = run("score", str(src), "-o", str(out), "--model", str(tiny_lm_path), "--quiet")
    assert result.exit_code == 0, result.output
    [record] = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["passages"] == [] and all(c["p_faithful"] == 0.0 for c in record["claims"])
    assert run("report", str(out), "-o", str(html)).exit_code == 0
    page = html.read_text()
    assert "no passages (scored closed-book)" in page and "retrieval returned nothing" in page
    assert "written by an older franq" not in page


def test_the_api_and_the_service_accept_an_answer_without_passages(tiny_lm, make_franq):
    import httpx
    from servers import serve_in_thread

    from franq.apps.serve import create_app

    direct = make_franq(tiny_lm).score(CLOSED["question"], [], CLOSED["answer"])
    assert direct.scored and all(c.p_faithful == 0.0 for c in direct.scored)
    with serve_in_thread(create_app(make_franq(tiny_lm), max_body_bytes=4096)) as base:
        r = httpx.Client(timeout=None).post(f"{base}/score", json=CLOSED)
    assert r.status_code == 200, r.text
    record = r.json()
    assert record["passages"] == [] and all(c["p_faithful"] == 0.0 for c in record["claims"])


# ---------------------------------------------------------------- help and docs drift
STATED = [r"'([\w.]+)' \(default\b", r"\(default: (?:the config's, )?'?([\w.]+)'?\)", r"Default: the config's \(([\w.]+)\)"]
"""How a help text states a default: "'atomic' (default: ...)", "(default: combined)",
"(default: the config's, 256)", "Default: the config's (long)"."""


def _commands(group, path=()):
    import click

    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))
        else:
            yield " ".join((*path, name)), command


def test_help_defaults_match_the_config_defaults_for_every_option_that_states_one():
    import click

    from franq.cli.options import DEFAULTS, FLAG_KEYS

    keys = {**FLAG_KEYS, "max_new_tokens": "model.max_new_tokens"}
    checked = set()
    for where, command in _commands(main):
        for p in command.params:
            said = (p.help or "").replace("'default' (default", "(default").replace("'default'", "")  # the value
            states = "(default" in said.lower() or "default:" in said.lower()  # not "Default preset."
            if not isinstance(p, click.Option) or p.name not in keys or not states:
                continue
            real = DEFAULTS
            for part in keys[p.name].split("."):
                real = getattr(real, part)
            if real is None:
                continue  # a described default ("the embedded SmolLM2", "cuda if available")
            stated = [m.group(1) for pattern in STATED for m in re.finditer(pattern, p.help)]
            assert stated, f"{where} {p.opts[-1]}: states a default in a form this test cannot read: {p.help!r}"
            assert stated == [str(real)], f"{where} {p.opts[-1]}: help says {stated}, the config's default is {real!r}"
            checked.add((where, p.opts[-1]))
    assert {("score", "--decomposer"), ("score", "--faithfulness"), ("score", "--mode"),
            ("score", "--calibrator-mismatch"), ("answer", "--max-new-tokens")} <= checked


def test_help_of_score_states_the_atomic_decomposer_default():
    text = run("score", "--help").output
    assert "'atomic' (default" in " ".join(text.split())


def _install_facts():
    """The README, the extras `make test` installs (the Makefile's TEST_EXTRAS) and every extra setup.cfg declares."""
    import configparser
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    test_extras = re.search(r"^TEST_EXTRAS\s*:=\s*\[([\w,]+)\]", (root / "Makefile").read_text(), re.M).group(1)
    setup = configparser.ConfigParser()
    setup.read(root / "setup.cfg")
    return (root / "README.md").read_text(), test_extras, set(setup["options.extras_require"])


def test_readme_install_lines_match_the_makefile_and_setup_cfg():
    readme, test_extras, declared = _install_facts()
    said = re.findall(r"`make test`\s+installs\s+`\.\[([\w,]+)\]`", " ".join(readme.split()))
    assert said and set(said) == {test_extras}, f"README says make test installs {said}, the Makefile {test_extras}"
    extras = " ".join(readme[readme.index("Extras: "):].split("\n\n")[0].split())
    for extra in sorted(declared):
        assert f"franq[{extra}]" in extras, f"README's extras paragraph omits franq[{extra}]"


def test_every_directory_with_shipped_files_is_a_package_setuptools_is_told_about():
    """setuptools warned ~40 lines on every install ("Package 'franq.data' is absent from the
    `packages` configuration"): each folder holding files is a configured package, and its
    files are package data."""
    import configparser
    import fnmatch
    from pathlib import Path

    import setuptools

    root = Path(__file__).resolve().parents[1]
    setup = configparser.ConfigParser()
    setup.read(root / "setup.cfg")
    assert setup["options"]["packages"].strip() == "find_namespace:"
    found = setup["options.packages.find"]
    packages = set(setuptools.find_namespace_packages(
        str(root), include=found["include"].split(), exclude=found.get("exclude", "").split()))
    data = {k: v.split() for k, v in setup["options.package_data"].items()}
    for top in ("franq", "claims", "calibration"):
        for path in (root / top).rglob("*"):
            if path.is_dir() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            package = ".".join(path.parent.relative_to(root).parts)
            assert package in packages, f"{path.relative_to(root)}: {package} is not in setup.cfg's packages"
            if path.suffix != ".py":
                assert any(fnmatch.fnmatch(path.name, g) for g in data.get(package, ())), \
                    f"{path.relative_to(root)} is not package data of {package}"


# ---------------------------------------------------------------- console noise
def test_generating_an_answer_gives_no_transformers_deprecation(tiny_lm, monkeypatch):
    """Every `franq answer` and the service log printed transformers' "Passing
    `generation_config` together with generation-related arguments is deprecated"."""
    from transformers.utils import logging as hf_logging

    from franq.lm.sampling import generate

    logger = hf_logging.get_logger("transformers.generation.utils")
    said = []
    for level in ("warning", "warning_once", "info"):
        monkeypatch.setattr(logger, level, lambda msg, *args, **kwargs: said.append(str(msg)))
    out = generate(tiny_lm, tiny_lm.encode("The Eiffel Tower is in"), max_new_tokens=3)
    assert len(out.token_ids) == len(out.token_logprobs) <= 3
    assert not [m for m in said if "generation_config" in m], said


def test_the_trust_report_embedder_loads_without_a_progress_bar(capfd):
    pytest.importorskip("sentence_transformers")
    from transformers.utils import logging as hf_logging

    import franq
    from franq.apps.trust.models import Embedder

    was = hf_logging.is_progress_bar_enabled()
    hf_logging.enable_progress_bar()  # as in a fresh process (another test may have turned it off)
    try:
        try:
            embedder = Embedder()
        except franq.ModelNotFoundError as exc:
            pytest.skip(f"the trust extra's embedding model is not installed: {exc}")
        assert embedder.encode(["a"]).shape[0] == 1
    finally:
        (hf_logging.enable_progress_bar if was else hf_logging.disable_progress_bar)()
    assert "Loading weights" not in capfd.readouterr().err
