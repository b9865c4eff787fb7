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
    assert "1 bad records, 0 duplicate ids" in res.stderr and "(listed below)" in res.stderr  # not a deleted file


def _answer(tiny_lm_path, *args):
    from conftest import tiny_cli_args

    res = CliRunner().invoke(main, ["answer", "-q", "When was it built?", "-p", "Built from 1887 to 1889.",
                                    "--format", "json", "--quiet", *args, *tiny_cli_args(tiny_lm_path)])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_short_answer_runs_past_the_samples_budget_to_its_end(tiny_lm_path, tiny_lm):
    """`franq answer --mode short` generated its answer as row 0 of the 16-token samples
    ("1887 to 18"): the answer now runs to its end of line within 64 tokens (the samples
    keep their 16), and one that reaches its budget says so."""
    record = _answer(tiny_lm_path, "--mode", "short")
    n_tokens = len(tiny_lm.tokenizer.encode(record["answer"], add_special_tokens=False))
    assert n_tokens > 16  # the random tiny model never ends its line: it runs to the budget
    assert "the short answer reached its 64-token budget" in " ".join(record["warnings"])
    assert "max_tokens=16" in record["stack"]["sampling"]  # the samples (and the calibrator's stack) unchanged
    shorter = _answer(tiny_lm_path, "--mode", "short", "--max-new-tokens", "20")
    assert record["answer"].startswith(shorter["answer"]) and len(shorter["answer"]) < len(record["answer"])
    assert "its 20-token budget" in " ".join(shorter["warnings"])


def test_an_answer_cut_at_its_budget_ends_at_its_last_sentence_end():
    from franq.lm.prompts import answer_end

    assert answer_end("It was built from 1887 to 1889. It is in") == "It was built from 1887 to 1889."
    assert answer_end('He said "yes." Then') == 'He said "yes."'
    assert answer_end("1887 to 18") == "1887 to 18"  # no sentence end: kept (and the warning says it may be cut)
    assert answer_end("It costs 1.5 euros") == "It costs 1.5 euros"


def test_after_a_fallback_the_top_level_answer_is_the_one_to_show(tiny_lm_path, tiny_lm, tmp_path):
    """After a fallback the top-level `answer` was the rejected one (the one to show was in
    decision.answer): now the top-level answer is the one to show, in the JSON, the table
    and read back; the rejected one is kept as decision.rejected_answer, which the claims'
    spans index (AnswerScore.scored_answer)."""
    import franq

    always = ["--mode", "short", "--verify", "p_true", "--verify-threshold", "2"]  # above every score: fall back
    record = _answer(tiny_lm_path, *always, "--fallback", "closed_book")
    d = record["decision"]
    assert d["action"] == "fallback" and record["answer"] == d["answer"] == d["fallback_answer"]
    rejected = d["rejected_answer"]
    assert rejected and rejected != record["answer"]
    for c in record["claims"]:  # the claims are the rejected answer's
        assert all(0 <= a < b <= len(rejected) for a, b in c["claim"]["char_spans"])
    # the fallback's answer, shown to a user, runs past the samples' 16 tokens too
    assert len(tiny_lm.tokenizer.encode(record["answer"], add_special_tokens=False)) > 16
    path = tmp_path / "answer.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    line = next(franq.read_results(path, with_input=True))
    assert line.result.answer == record["answer"] and line.result.scored_answer == rejected
    assert line.example.answer == rejected and line.result.decision.rejected_answer == rejected
    res = CliRunner().invoke(main, ["report", str(path), "-o", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    assert "the answer highlighted here is the rejected one" in (tmp_path / "r.html").read_text()

    from conftest import tiny_cli_args

    res = CliRunner().invoke(main, ["answer", "-q", "When was it built?", "-p", "Built from 1887 to 1889.", "--quiet",
                                    *always, "--fallback", "closed_book", *tiny_cli_args(tiny_lm_path)])
    assert res.exit_code == 0, res.output
    first = res.stdout.splitlines()[0]
    assert first == f"Answer: {record['answer'].strip()}"
    assert "Rejected answer (the claims above are its claims): " in res.stdout
    abstained = _answer(tiny_lm_path, *always, "--fallback", "abstain")
    assert abstained["answer"] == "" and abstained["decision"]["answer"] is None
    assert abstained["decision"]["rejected_answer"] == rejected  # nothing lost
    res = CliRunner().invoke(main, ["answer", "-q", "When was it built?", "-p", "Built from 1887 to 1889.", "--quiet",
                                    *always, "--fallback", "abstain", *tiny_cli_args(tiny_lm_path)])
    assert res.stdout.splitlines()[0] == "Answer: (abstained)"


MARKDOWN = ("## Setup\nInstall the package with pip.\n\nMemory\nThe service needs 4 GB of memory.\n\n**Notes:**\n"
            "- **Timeout**\n- Limits\n  - The timeout is 30 seconds.\n\nTimeout\nRequests stop after 30 seconds.\n")


def test_bare_markdown_labels_are_not_scored(tiny_lm_path):
    """Bare labels ("Memory", "Timeout", "**Notes:**", "## Setup", a list header) were
    scored as claims: they are kept, not check-worthy, through `franq score`."""
    from conftest import tiny_cli_args

    res = CliRunner().invoke(main, ["score", "-q", "How do I set up the service?", "-p", "It needs 4 GB.",
                                    "-a", MARKDOWN, "--format", "json", "--quiet", *tiny_cli_args(tiny_lm_path)])
    assert res.exit_code == 0, res.output
    claims = [(c["claim"]["text"], c["status"], c["claim"]["note"]) for c in json.loads(res.stdout)["claims"]]
    skipped = [(t, note) for t, status, note in claims if status == "not_check_worthy"]
    assert skipped == [("Setup", "heading"), ("Memory", "label"), ("Notes:", "heading"), ("Timeout", "heading"),
                       ("Limits", "label"), ("Timeout", "label")]
    scored = [t for t, status, _ in claims if status == "scored"]
    assert scored == ["Install the package with pip.", "The service needs 4 GB of memory.",
                      "The timeout is 30 seconds.", "Requests stop after 30 seconds."]


def test_a_short_answer_or_a_flat_list_item_stays_a_claim():
    from claims.decompose import SentenceDecomposer

    def worthy(answer):
        return [(c.text, c.check_worthy) for c in SentenceDecomposer().decompose(answer)]

    assert worthy("Paris") == [("Paris", True)]
    assert worthy("Paris\nIt has been the capital since 987.")[0] == ("Paris", True)  # the answer, then more
    assert worthy("The capitals:\n- Paris\n- Rome") == [("The capitals:", False), ("Paris", True), ("Rome", True)]
    assert worthy("It is big.\n\nThe tower is tall\nIt was built in 1889.")[1] == ("The tower is tall", True)
    assert worthy("Intro.\n\nMemory: 4 GB\nMore.")[1] == ("Memory: 4 GB", True)  # a key and its value


GARBLED = ("The command is docker compose with a space instead of a hyphen. Leonardo painted the Mona Lisa "
           "between 1503 and 1519. It hangs in the Louvre. Curie was born in Warsaw and later moved to Paris, "
           "where she studied physics. The company released the phone in 2007, and it sold six million units.")


def test_the_atomic_splitter_no_longer_garbles_sentences(tiny_lm_path):
    """The atomic splitter read "instead of" and "between ... and" as lists ("the command is
    docker compose with instead a hyphen", "painted ... between 1503"), dropped the subject
    of a predicate whose relative clause had one ("later moved to Paris where she studied"),
    and read "it" as a subject when an object was as likely ("Leonardo hangs in the
    Louvre"): through `franq score` (the default atomic decomposer)."""
    from conftest import tiny_cli_args

    res = CliRunner().invoke(main, ["score", "-q", "Tell me about these.", "-p", "Nothing.", "-a", GARBLED,
                                    "--format", "json", "--quiet", *tiny_cli_args(tiny_lm_path)])
    assert res.exit_code == 0, res.output
    claims = [(c["claim"]["text"], c["claim"]["note"]) for c in json.loads(res.stdout)["claims"]]
    texts = [t for t, _ in claims]
    assert texts[0] == "The command is docker compose with a space instead of a hyphen."
    assert texts[1] == "Leonardo painted the Mona Lisa between 1503 and 1519."
    assert texts[2] == "It hangs in the Louvre." and "unresolved" in claims[2][1]  # not "Leonardo hangs ..."
    assert texts[3:5] == ["Curie was born in Warsaw", "Curie later moved to Paris where she studied physics"]
    assert texts[5] == "The company released the phone in 2007"
    assert texts[6] == "it sold six million units" and "unresolved" in claims[6][1]
    assert len(texts) == 7


def test_the_atomic_splitter_still_splits_what_it_should():
    from claims.atomic import AtomicDecomposer

    def split(text):
        return [c.text for c in AtomicDecomposer().decompose(text)]

    assert split("She speaks French, German and Italian.") == [
        "She speaks French", "She speaks German", "She speaks Italian"]
    assert split("He played both guitar and piano.") == ["He played guitar", "He played piano"]
    assert split("Curie, who won two Nobel prizes, died in 1934.") == ["Curie died in 1934",
                                                                      "Curie won two Nobel prizes"]
    assert split("The tower was built in 1889 and it was designed by Eiffel.") == [
        "The tower was built in 1889", "The tower was designed by Eiffel"]
    assert split("The Eiffel Tower is in Paris. It was built in 1889.")[1] == "The Eiffel Tower was built in 1889."
    assert split("You can pay by card or cash.") == ["You can pay by card or cash."]  # "or" states neither
    assert split("Timeout: 30 seconds by default.") == ["Timeout: 30 seconds by default."]  # no bare "Timeout"


def test_one_answer_shows_each_stage_on_stderr_with_progress(tiny_lm_path):
    """A 2-claim answer against 15 passages (39k characters) took 52 s with no progress shown:
    `--progress` (off a terminal; a terminal shows a bar) prints one line per stage on stderr,
    and stdout keeps only the result."""
    from conftest import tiny_cli_args

    passages = [f"Passage {k}: the tower was built in 1889 for the fair. " * 4 for k in range(15)]
    args = ["score", "-q", "When was it built?", *[x for p in passages for x in ("-p", p)],
            "-a", "It was built in 1889. It is in Paris.", "--format", "json", *tiny_cli_args(tiny_lm_path)]
    res = CliRunner().invoke(main, [*args, "--progress"])
    assert res.exit_code == 0, res.output
    said = [line for line in res.stderr.splitlines() if line.startswith("franq score: ")]
    steps = [re.sub(r" \(\d+\.\d s\)$", "", line) for line in said]
    assert steps == ["franq score: loading the model", "franq score: scoring", "franq score: finding the claims",
                     "franq score: reading the answer with and without the passages", "franq score: scoring the claims",
                     "franq score: checking the claims against the passages", "franq score: calibrating",
                     "franq score: done"]
    assert len(json.loads(res.stdout)["claims"]) == 2
    quiet = CliRunner().invoke(main, args)  # off a terminal, without --progress: nothing
    assert quiet.exit_code == 0 and "franq score: " not in quiet.stderr
    answered = CliRunner().invoke(main, ["answer", "-q", "When was it built?", "-p", passages[0], "--progress",
                                         "--max-new-tokens", "8", "--format", "json", *tiny_cli_args(tiny_lm_path)])
    assert "franq answer: generating the answer" in answered.stderr, answered.output


def test_it_is_not_read_as_a_subject_when_an_object_before_it_is_as_likely():
    """"Arnold is the publisher of Media Play News. It covers home entertainment." was split
    as "Arnold covers home entertainment" (and then flagged false): with another singular
    noun before "it" in its sentence or beside the subject as an object, "it" is kept and
    noted; with none, it is still read as the subject before it."""
    from claims.atomic import AtomicDecomposer

    def second(text):
        return AtomicDecomposer().decompose(text)[1]

    c = second("Arnold is the publisher of Media Play News. It covers home entertainment.")
    assert c.text == "It covers home entertainment." and "unresolved" in c.note
    claims = AtomicDecomposer().decompose("Exposure therapy is common. The patient imagines the trauma and "
                                          "describes it.")
    [c] = [c for c in claims if "describes" in c.text]
    assert c.text.endswith("describes it") and "unresolved" in c.note  # not "describes exposure therapy"
    c = second("The Moon is far away. Yuri Gagarin was the first man to walk on it.")
    assert c.text == "Yuri Gagarin was the first man to walk on the Moon."
    c = second("The tower is in Paris. If it falls, it would be a loss.")
    assert "read as 'the tower'" in (c.note or "")


def test_a_short_answer_without_room_for_more_keeps_the_samples_one(tmp_path):
    """With on_overflow = "error" and a prompt that leaves room for the samples' 16 tokens
    but not for 64, the answer is the 16-token one, with a warning (not an error)."""
    from conftest import build_tiny_lm, make_franq

    from franq.lm import CausalLM

    lm = CausalLM.load(str(build_tiny_lm(tmp_path / "lm", max_positions=240)), device="cpu")
    fq = make_franq(lm, {"mode": "short", "model": {"on_overflow": "error"}})
    result = fq.answer("When?", ["word " * 20], mode="short")
    assert "the short answer stopped at the samples' 16 tokens: the context has no room" in result.warnings
    assert result.answer and result.mode == "short"
