"""The rough edges a new user hit (issue 17), one test each: each failed on the code
before the fix. The HTML report, the CSV and the service have their own files
(test_html_report.py, test_serve.py, test_browser.py)."""
from __future__ import annotations

import csv
import io
import json
import re
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import make_franq

import franq
from calibration.franq import FranqCalibrator
from claims.chat import ChatReply
from claims.checkworthy import non_claim_reason
from claims.decompose import SentenceDecomposer
from claims.llm_decompose import LLMDecomposer
from franq.calibrate import resolve_calibrator, stack_key
from franq.cli import main

ROOT = Path(__file__).resolve().parents[1]
GOOD = {"question": "When was the Eiffel Tower built?",
        "passages": ["The Eiffel Tower was built from 1887 to 1889. It is in Paris."],
        "answer": "It was built from 1887 to 1889 [1]. It is in Paris."}


def _tiny(tiny_lm_path) -> list[str]:
    return ["--model", str(tiny_lm_path), "--faithfulness", "lexical", "--calibrator", "none"]


# ---------------------------------------------------------------------------- errors and API
def test_missing_calibrator_says_calibrator_once(tmp_path):
    stack = stack_key(model="m", faithfulness="f", uq_faith="a", uq_unfaith="b", mode="long")
    with pytest.raises(franq.InputError) as exc:
        resolve_calibrator(str(tmp_path / "nope.json"), stack)
    assert str(exc.value).startswith(f"calibrator: cannot read {tmp_path / 'nope.json'}")
    assert "calibrator: calibrator" not in str(exc.value)


def test_example_is_exported_and_score_many_takes_dicts_and_dataframes(tiny_lm):
    assert "Example" in franq.__all__ and franq.Example.from_dict(GOOD).answer == GOOD["answer"]
    f = make_franq(tiny_lm)
    from_dict = f.score_many([GOOD, {**GOOD, "id": 2, "meta": {"user": "ann"}}])
    from_example = f.score_many([franq.Example.from_dict(GOOD)])
    assert [c.p_true_raw for c in from_dict[0].claims] == [c.p_true_raw for c in from_example[0].claims]
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([GOOD, {**GOOD, "claims": ["It is in Paris."]}])  # NaN 'claims' in row 0: not given
    from_frame = f.score_many(frame)
    assert len(from_frame) == 2 and len(from_frame[1].claims) == 1
    assert [c.p_true_raw for c in from_frame[0].claims] == [c.p_true_raw for c in from_dict[0].claims]
    with pytest.raises(franq.InputError, match=r"examples\[1\]: missing field 'answer'"):
        f.score_many([GOOD, {"question": "q", "passages": ["p"]}])


def test_verbose_flag_is_accepted_after_the_subcommand(tiny_lm_path):
    res = CliRunner().invoke(main, ["score", "-q", GOOD["question"], "-p", GOOD["passages"][0], "-a", GOOD["answer"],
                                    *_tiny(tiny_lm_path), "--format", "json", "-v"])
    assert res.exit_code == 0, res.output
    for command in (["score"], ["answer"], ["fit", "calibrator"], ["report"], ["serve"]):
        assert "-v, --verbose" in CliRunner().invoke(main, [*command, "--help"]).output


def test_user_metadata_passes_through_a_batch(tiny_lm_path, tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({**GOOD, "id": "a", "meta": {"request_id": "r-1", "user": {"name": "ann"}}}) + "\n"
                   + json.dumps({**GOOD, "id": "b", "extra": 1}) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(main, ["score", str(src), "-o", str(out), "--quiet", *_tiny(tiny_lm_path)])
    assert res.exit_code == 0, res.output
    [record] = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["meta"] == {"request_id": "r-1", "user": {"name": "ann"}}
    assert record["passages"] == [{"text": GOOD["passages"][0], "title": ""}]
    error = json.loads((tmp_path / "out.jsonl.errors.jsonl").read_text())
    assert "unknown field(s) ['extra']" in error["error"] and "put your own fields in 'meta'" in error["error"]


def test_a_scored_output_with_passages_is_still_read_as_scored_by_calibrate(tiny_lm):
    from franq.fit.calibrator import is_scored_record

    result = make_franq(tiny_lm).score_many([GOOD])[0]
    assert is_scored_record(franq.result_record("x", result, franq.Example.from_dict(GOOD)))
    assert not is_scored_record(GOOD)


# ---------------------------------------------------------------------------- claims
ANSWER = ("The Eiffel Tower was built from 1887 to 1889. It was designed by Gustave Eiffel. "
          "The tower is made of solid gold. It is located in Berlin, Germany.")


class OneClaimChat:
    """A chat model that, like the embedded one, returns the true claims and skips the false sentences."""

    name = "skips-false"

    def complete(self, messages, *, max_tokens):
        return ChatReply(json.dumps(["The Eiffel Tower was built from 1887 to 1889.",
                                     "The tower was designed by Gustave Eiffel."]), calls=1)


def test_sentences_the_llm_decomposer_misses_are_scored_from_the_sentence_splitter(tiny_lm, tmp_path):
    dec = LLMDecomposer(OneClaimChat()).decompose_report(ANSWER)
    texts = [c.text for c in dec.claims]
    assert texts == ["The Eiffel Tower was built from 1887 to 1889.", "The tower was designed by Gustave Eiffel.",
                     "The tower is made of solid gold.", "It is located in Berlin, Germany."]
    assert all(c.check_worthy for c in dec.claims)
    assert [w for w in dec.warnings if "scored it as a sentence claim" in w] == [
        "llm decomposer: no claim covers sentence 2 ('The tower is made of solid gold.'); scored it as a sentence claim",
        "llm decomposer: no claim covers sentence 3 ('It is located in Berlin, Germany.'); scored it as a sentence "
        "claim"]
    result = make_franq(tiny_lm, decomposer=LLMDecomposer(OneClaimChat())).score(
        "Tell me about the tower.", ["The Eiffel Tower is in Paris."], ANSWER)
    assert [c.status for c in result.claims] == ["scored"] * 4
    assert result.claims[3].claim.text == "It is located in Berlin, Germany." and result.claims[3].p_true_raw is not None


@pytest.mark.parametrize("sentence", [
    "That's a complex question that may not have a definitive answer.",
    "It depends.", "It is difficult to say.", "There is no simple answer.", "This is a good question.",
])
def test_hedges_are_not_check_worthy(sentence):
    assert non_claim_reason(sentence) == "hedge"
    claims = SentenceDecomposer().decompose(sentence + " Paris is the capital of France.")
    assert [(c.check_worthy, c.note) for c in claims] == [(False, "hedge"), (True, None)]


@pytest.mark.parametrize("sentence", [
    "It depends on the altitude: water boils at 100 degrees Celsius at sea level.",
    "It is hard to say exactly, but the tower was finished in 1889 by Gustave Eiffel's company.",
    "The question of who designed the tower has a definitive answer: Gustave Eiffel's company.",
])
def test_sentences_that_also_state_a_fact_are_still_claims(sentence):
    assert non_claim_reason(sentence) is None


# ---------------------------------------------------------------------------- outputs
def test_threshold_adds_a_verdict_and_csv_has_one_row_per_claim(tiny_lm_path):
    args = ["score", "-q", GOOD["question"], "-p", GOOD["passages"][0], "-a", GOOD["answer"], *_tiny(tiny_lm_path),
            "--threshold", "0.0"]
    record = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).stdout)
    assert [c["verdict"] for c in record["claims"]] == ["likely_true", "likely_true"]  # every P >= 0
    res = CliRunner().invoke(main, [*args, "--threshold", "1.0", "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert [r["claim_index"] for r in rows] == ["0", "1"] and {r["verdict"] for r in rows} == {"likely_false"}
    assert {"id", "text", "status", "p_true", "p_faithful", "uq_faith", "uq_unfaith",
            "signal.log_claim_prob"} <= set(rows[0])
    assert float(rows[0]["p_true"]) == pytest.approx(record["claims"][0]["p_true_raw"])
    with pytest.raises(franq.InputError, match="calibration.threshold"):
        franq.FranqConfig.from_dict({"calibration": {"threshold": 1.5}})


def test_answer_prints_the_generated_answer_and_html(tiny_lm_path, tmp_path):
    res = CliRunner().invoke(main, ["answer", "-q", GOOD["question"], "-p", GOOD["passages"][0], "--max-new-tokens",
                                    "12", "--html", str(tmp_path / "a.html"), *_tiny(tiny_lm_path)])
    if res.exit_code != 0:  # a random tiny model may generate an empty answer
        assert "empty answer" in res.output
        return
    assert res.stdout.startswith("Answer: ")
    assert 'class="answer-text"' in (tmp_path / "a.html").read_text()


def test_single_answer_progress_bar_names_its_stage(capsys):
    from franq.cli.options import StageProgress as _StageProgress

    bar = _StageProgress(True, "franq score")
    bar.TICK_SECONDS = 0.001
    err = ""
    with bar as step:
        while err.count("franq score: loading the model") < 3:  # the clock ticks before any step is done
            time.sleep(0.001)
            err += capsys.readouterr().err
        step()
    err += capsys.readouterr().err
    assert "franq score: loading the model" in err and "franq score: scoring" in err


# ---------------------------------------------------------------------------- calibrate --holdout
def _scored_records(path, n_answers=40, seed=0):
    rng = np.random.default_rng(seed)
    stack = stack_key(model="m", faithfulness="lexical-v1", uq_faith="claim_prob", uq_unfaith="parametric", mode="long")
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n_answers):
            claims = []
            for _ in range(3):
                truth = bool(rng.random() < 0.6)
                claims.append({"claim": {"text": "x", "char_spans": []}, "status": "scored",
                               "p_faithful": float(rng.uniform(0.4, 1) if truth else rng.uniform(0, 0.6)),
                               "signals": {"log_claim_prob": -abs(float(rng.normal(-0.5 if truth else -3, 1))),
                                           "log_parametric": -abs(float(rng.normal(-2, 1)))}, "is_true": truth})
            f.write(json.dumps({"id": str(i), "question": "q", "answer": "a", "mode": "long", "model": "m",
                                "faithfulness": "lexical-v1", "stack": stack, "claims": claims}) + "\n")
    return path


def test_calibrate_holdout_reports_held_apart_ece_and_auroc(tmp_path):
    src = _scored_records(tmp_path / "scored.jsonl")
    out = tmp_path / "cal.json"
    res = CliRunner().invoke(main, ["fit", "calibrator", str(src), "-o", str(out), "--holdout", "0.25",
                                    "--min-per-condition", "5"])
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "cal.report.json").read_text())
    h = report["holdout"]
    assert h["n_answers"] == 10 and h["n_claims"] == 30 and report["n_claims"] == 90  # split by answer
    for part in ("raw", "calibrated"):
        assert 0 <= h[part]["ece"] <= 1 and 0 <= h[part]["auroc"] <= 1
    assert h["raw"]["auroc"] > 0.6  # the synthetic signals carry the label
    assert re.search(r"held-apart ECE: raw \d\.\d{4}, calibrated \d\.\d{4}", res.output)
    assert "held-apart AUROC" in res.output
    assert FranqCalibrator.from_json(out).variant == "condition"
    res = CliRunner().invoke(main, ["fit", "calibrator", str(_scored_records(tmp_path / "two.jsonl", n_answers=1)),
                                    "-o", str(tmp_path / "c2.json"), "--holdout", "0.2"])
    assert res.exit_code != 0 and "cannot be split" in res.output


# ---------------------------------------------------------------------------- README
def test_readme_links_resolve_in_a_clone():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "../shared" not in text and "/work/" not in text
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if re.match(r"[a-z]+://|mailto:", target):
            continue
        assert (ROOT / target).exists(), f"README links to {target}, which is not in the repository"
    for section in ("franq report", "franq serve", "--format csv"):
        assert section in text, f"README has no example of {section}"


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("POSIX paths")


# ---------------------------------------------------------------------------- the embedded model
@pytest.mark.slow
@pytest.mark.embedded
def test_embedded_llm_decomposer_scores_every_sentence_of_the_bundled_example(tmp_path):
    """The reported case: `--decomposer llm` on the embedded model skipped exactly the false
    sentences ("solid gold", "Berlin") and only warned. Now each is scored, and the HTML
    report highlights every claim."""
    cfg = tmp_path / "franq.toml"
    cfg.write_text(f'[decomposer]\nname = "llm"\ncache_dir = "{tmp_path / "cache"}"\n', encoding="utf-8")
    res = CliRunner().invoke(main, ["score", "--example", "--config", str(cfg), "--format", "json",
                                    "--html", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    record = json.loads(res.stdout)
    answer = record["answer"]
    covered = {i for c in record["claims"] if c["status"] == "scored"
               for a, b in c["claim"]["char_spans"] for i in range(a, b)}
    for sentence in ("The tower is made of solid gold.", "It is located in Berlin, Germany."):
        start = answer.index(sentence)
        assert set(range(start, start + len(sentence))) <= covered, sentence
    html = (tmp_path / "r.html").read_text()
    assert len(re.findall(r'<mark class="claim pb\d"', html)) >= 5
