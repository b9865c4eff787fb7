"""The decomposer stage inside the pipeline: config, warnings in the result, CLI flags."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from claims.chat import ChatReply
from claims.decompose import SentenceDecomposer
from claims.llm_decompose import LLMDecomposer
from franq.cli import main
from franq import registry
from franq.config import FranqConfig
from franq.errors import InputError
from franq.io import Example, parse_passages
from franq.presets import check_config

QUESTION = "What is the capital of France?"
PASSAGES = ["Paris is the capital of France."]
ANSWER = "Sure! Paris, the capital of France, is known for the Eiffel Tower."


class ScriptedChat:
    name = "scripted"

    def __init__(self, *replies):
        self.replies = list(replies)

    def complete(self, messages, *, max_tokens):
        return ChatReply(self.replies.pop(0), 10, 5)


def test_llm_claims_are_scored_and_greeting_kept(tiny_lm, make_franq, constant_faithfulness):
    chat = ScriptedChat('["Paris is the capital of France.", "Paris is known for the Eiffel Tower."]')
    franq = make_franq(tiny_lm, decomposer=LLMDecomposer(chat), faithfulness=constant_faithfulness(0.5))
    result = franq.score(QUESTION, PASSAGES, ANSWER)
    assert [(c.claim.text, c.status) for c in result.claims] == [
        ("Sure!", "not_check_worthy"), ("Paris is the capital of France.", "scored"),
        ("Paris is known for the Eiffel Tower.", "scored")]
    assert result.warnings == ()


def test_decomposer_fallback_warning_reaches_answer_score(tiny_lm, make_franq, constant_faithfulness):
    franq = make_franq(tiny_lm, decomposer=LLMDecomposer(ScriptedChat("oops", "oops again")),
                       faithfulness=constant_faithfulness(0.5))
    [result] = franq.score_many([Example(QUESTION, parse_passages(PASSAGES), ANSWER)])
    assert any("fell back to the sentence splitter" in w for w in result.warnings)
    assert [c.status for c in result.claims] == ["not_check_worthy", "scored"]


def test_default_config_uses_the_atomic_decomposer(tiny_lm):
    from claims.atomic import AtomicDecomposer

    config = FranqConfig()
    assert config.decomposer.name == "atomic"
    assert isinstance(registry.build("decomposers", config.decomposer.name, config, tiny_lm), AtomicDecomposer)
    sentence = FranqConfig.from_dict({"decomposer": {"name": "sentence"}})
    assert isinstance(registry.build("decomposers", "sentence", sentence, tiny_lm), SentenceDecomposer)


@pytest.mark.parametrize("changes, field", [
    ({"name": "gpt"}, "decomposer.name"),
    ({"name": "llm", "backend": "openai"}, "decomposer.model"),
    ({"backend": "vllm"}, "decomposer.backend"),
    ({"timeout": 0}, "decomposer.timeout"),
    ({"concurrency": 0}, "decomposer.concurrency"),
    ({"align": "spacy"}, "decomposer.align"),
])
def test_bad_decomposer_config_names_the_field(changes, field):
    with pytest.raises(InputError, match=f"'{field}'"):
        check_config(FranqConfig.from_dict({"decomposer": changes}))


@pytest.fixture(scope="module")
def long_context_lm(tmp_path_factory):
    from tests.conftest import build_tiny_lm
    from franq.lm import CausalLM

    path = build_tiny_lm(tmp_path_factory.mktemp("tiny-2k"), max_positions=2048)
    return CausalLM.load(str(path), device="cpu")


def test_local_llm_decomposer_reuses_the_scoring_model(long_context_lm, make_franq, tmp_path):
    dec = make_franq(long_context_lm, {"decomposer": {"name": "llm", "cache_dir": str(tmp_path),
                                                      "max_tokens": 24}}).decomposer
    assert isinstance(dec, LLMDecomposer) and dec.chat.lm is long_context_lm and dec.concurrency == 1
    report = dec.decompose_report("Paris is the capital of France. Lyon is a city.")
    assert report.claims  # a random tiny model: parsed claims or the fallback, never nothing
    assert report.usage.calls >= 1 and report.usage.completion_tokens >= 1
    assert list(tmp_path.rglob("*.json"))


def test_prompt_longer_than_context_falls_back_with_reason(tiny_lm, make_franq):
    dec = make_franq(tiny_lm, {"decomposer": {"name": "llm"}}).decomposer  # 512-token context
    report = dec.decompose_report("Paris is the capital of France.")
    assert report.method == "llm->sentence"
    assert "does not fit the model context" in report.warnings[0]


def test_cli_llm_decomposer_through_server(tiny_lm_path, tmp_path, monkeypatch):
    from servers import chat_server
    from test_openai_chat import _Handler  # the same scripted server

    monkeypatch.setenv("FRANQ_HOME", str(tmp_path))
    with chat_server(_Handler, script=[("ok", '["Paris is the capital of France."]')]) as srv:
        args = ["score", "--model", str(tiny_lm_path), "-q", QUESTION, "-p", PASSAGES[0], "-a", ANSWER,
                "--format", "json", "--decomposer", "llm", "--decomposer-model", "tiny-chat",
                "--decomposer-base-url", srv.base_url]
        out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    record = json.loads(out.output)
    assert [c["claim"]["text"] for c in record["claims"]] == ["Sure!", "Paris is the capital of France."]
    assert len(srv.requests) == 1
    assert list((tmp_path / "decompose").rglob("*.json"))  # cached under $FRANQ_HOME
