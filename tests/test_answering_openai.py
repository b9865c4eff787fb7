"""The answering components against a real HTTP server on 127.0.0.1 speaking the OpenAI
chat API, through the real ``openai`` client (the pattern of tests/test_openai_chat.py):
the label rater, the 1-shot autorater, pre-answering, post-answering NLI (the judge
backend), self-rated P(True) and dual generation; and a server without log-probabilities."""
from __future__ import annotations

import math

import pytest
from servers import ChatHandler, chat_server

from claims.chat import OpenAIChat
from franq.apps.answering import (
    AutoraterSufficiency, LabelSufficiency, NLICheck, OpenAIDualGeneration, OpenAILabeler, PreAnswerCheck,
    QAItem, SelfPTrueCheck,
)
from franq.errors import FranqError
from franq.faithfulness.chat_judge import OpenAIJudgeFaithfulness
from franq.types import Passage

TOP = {"yes": -0.2, "no": -1.8, "sufficient": -0.3, "insufficient": -1.5, "True": -0.1, "False": -2.5}
ITEM = QAItem("When was the tower built?", (Passage("It was built in 1889.", "Eiffel Tower"),), answer="1889")


def p(first: str, second: str) -> float:
    return 1 / (1 + math.exp(TOP[second] - TOP[first]))


class _Handler(ChatHandler):
    def reply(self, body):
        text = " ".join(m["content"] for m in body["messages"])
        if self.server.no_logprobs:
            return "yes", None
        if body.get("logprobs") and body.get("max_tokens") == 1:  # a label-word question
            top = [{"token": t, "logprob": lp, "bytes": None} for t, lp in TOP.items()]
            return "yes", {"content": [{"token": "yes", "logprob": -0.2, "bytes": None, "top_logprobs": top}]}
        if body.get("logprobs"):  # an answer (dual generation): surer with the passages
            lp = -0.1 if "Passages:" in text else -1.0
            return "1889", {"content": [{"token": "18", "logprob": lp, "bytes": None, "top_logprobs": []},
                                        {"token": "89", "logprob": lp, "bytes": None, "top_logprobs": []}]}
        # the chain-of-thought autorater
        verdict = 1 if "1889" in text.split("### REFERENCES")[-1] else 0
        return f'### EXPLANATION\nThe year is given.\n### JSON\n{{"Sufficient Context": {verdict}}}', None


@pytest.fixture
def server():
    with chat_server(_Handler, no_logprobs=False) as srv:
        yield srv


def test_every_rater_and_verifier_runs_against_the_server(server):
    labeler = OpenAILabeler("tiny", base_url=server.base_url, api_key_env="FRANQ_TEST_KEY")
    assert LabelSufficiency(labeler).rate([ITEM])[0] == pytest.approx(p("sufficient", "insufficient"))
    label_request = server.requests[-1]
    assert label_request["max_tokens"] == 1 and label_request["logprobs"] and label_request["temperature"] == 0
    assert "1. sufficient: The documents are sufficient" in label_request["messages"][0]["content"]

    chat = OpenAIChat("tiny", base_url=server.base_url, api_key_env="FRANQ_TEST_KEY", backoff=0.01)
    rater = AutoraterSufficiency(chat, timestamp="2019-01-01")
    no_answer = QAItem("When?", (Passage("Paris."),))
    assert rater.rate([ITEM, no_answer]).tolist() == [1.0, 0.0]
    assert "timestamp 2019-01-01" in server.requests[-1]["messages"][0]["content"]

    assert PreAnswerCheck(labeler).predict([ITEM])[0] == pytest.approx(p("yes", "no"))
    assert SelfPTrueCheck(labeler).predict([ITEM])[0] == pytest.approx(p("True", "False"))
    asked = server.requests[-1]["messages"]
    assert [m["role"] for m in asked] == ["system", "user", "assistant", "user"] and asked[2]["content"] == "1889"

    judge = OpenAIJudgeFaithfulness("tiny", base_url=server.base_url)
    assert NLICheck(judge).predict([ITEM])[0] == pytest.approx(p("yes", "no"))
    assert 'The answer to the question "When was the tower built?" is: "1889"' in \
        server.requests[-1]["messages"][-1]["content"]

    dual = OpenAIDualGeneration("tiny", base_url=server.base_url)
    assert dual.predict([ITEM])[0] == pytest.approx(0.9)
    assert dual.answers == ["1889"]


def test_a_server_without_logprobs_is_a_clear_error(server):
    server.no_logprobs = True
    labeler = OpenAILabeler("tiny", base_url=server.base_url)
    with pytest.raises(FranqError, match="no log-probabilities"):
        LabelSufficiency(labeler).rate([ITEM])
    with pytest.raises(FranqError, match="no log-probabilities"):
        OpenAIDualGeneration("tiny", base_url=server.base_url).predict([ITEM])
    assert len(server.requests) == 2  # one call each, no retries of a malformed reply
