"""What franq prints is safe: control characters and escape sequences from an
answer never reach the terminal raw, and secrets never reach any output, warning, log or
error message."""
from __future__ import annotations

import json
import logging
import re

import pytest
from click.testing import CliRunner

from conftest import ConstantFaithfulness, make_franq

RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # all but the newline
NASTY = ["\x1b[2J\x1b[31mred", "carriage\rreturn", "bell\x07", "csi\x9b31m", "bidi \u202eevil\u202c", "nul\x00",
         "tab\tand\nnewline", "del\x7f", "osc \x1b]0;title\x07"]


@pytest.fixture(scope="module")
def franq(tiny_lm):
    return make_franq(tiny_lm, faithfulness=ConstantFaithfulness(0.5))


@pytest.mark.parametrize("nasty", NASTY)
def test_table_output_escapes_control_characters(franq, nasty):
    from franq.cli.table import format_table

    res = franq.score(f"Where {nasty}?", ["Paris is in France."], f"Paris {nasty} is in France.",
                      claims=[f"Paris {nasty} is in France."])
    table = format_table(res)
    assert not RAW_CONTROL.search(table), repr(table)
    assert res.claims[0].claim.text == f"Paris {nasty} is in France."  # the data itself is unchanged


def test_printable_shows_escapes_visibly():
    from franq.cli.options import printable

    assert printable("a\x1b[31mb\rc\u202e") == "a\\x1b[31mb\\rc\\u202e"


def test_cli_error_message_is_redacted_and_escaped(tmp_path, monkeypatch):
    from franq.cli import main

    key = "sk-proj-SECRET0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    res = CliRunner().invoke(main, ["score", "--example", "--model", f"/models/{key}/\x1b[2Jx"])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert key not in res.output and "\x1b" not in res.output
    assert "\\x1b[2J" in res.output and len(res.output.strip().splitlines()) == 1


def test_log_lines_are_redacted_and_escaped():
    from franq.cli.options import RedactingFilter as _RedactingFilter

    record = logging.LogRecord("franq", logging.WARNING, __file__, 1, "server said %s",
                               ("Authorization: Bearer abcdef0123456789\x1b[2J",), None)
    assert _RedactingFilter().filter(record)
    assert record.getMessage() == "server said Authorization: Bearer <redacted>\\x1b[2J"


@pytest.mark.parametrize("text, secret", [
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payloadpart1.sig", "eyJhbGciOiJIUzI1NiJ9"),
    ('{"api_key": "abc123def456ghi"}', "abc123def456ghi"),
    ("x-api-key=zyxwvut98765", "zyxwvut98765"),
    ("token hf_abcdefghijklmnop", "hf_abcdefghijklmnop"),
    ("key sk-ant-api03-abcdefghijk", "sk-ant-api03-abcdefghijk"),
    ("ghp_abcdefghijklmnopqrstuvwxyz0123", "ghp_abcdefghijklmnopqrstuvwxyz0123"),
    ("AKIAABCDEFGHIJKLMNOP in the log", "AKIAABCDEFGHIJKLMNOP"),
])
def test_redact_masks_things_that_look_like_keys(text, secret):
    from franq.errors import redact

    assert secret not in redact(text) and "redacted" in redact(text)


@pytest.mark.parametrize("text", ["token positions are empty", "the passages[0] were truncated to 12 tokens",
                                  "only 2 of 7 content words of the claim occur in the answer"])
def test_redact_leaves_ordinary_messages_alone(text):
    from franq.errors import redact

    assert redact(text) == text


def test_json_output_line_has_no_secret_from_warnings(franq, monkeypatch):
    from claims.types import Decomposition
    from franq.results import result_record

    monkeypatch.setenv("SERVICE_TOKEN", "tok-0123456789-secret")

    class Leaky:
        name = "leaky"

        def decompose_many(self, answers):
            return [Decomposition((), warnings=("echo: tok-0123456789-secret",)) for _ in answers]

    f = make_franq(franq.lm, decomposer=Leaky(), faithfulness=ConstantFaithfulness(0.5))
    line = json.dumps(result_record("a", f.score("Where?", ["Paris."], "Paris.")))
    assert "tok-0123456789-secret" not in line and "SERVICE_TOKEN redacted" in line
