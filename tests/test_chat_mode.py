"""``mode = "chat"`` (issue 46.4): both FRANQ terms from an OpenAI-compatible chat model's
P(True) (``chat_p_true_rag`` with the passages, ``chat_p_true`` without), the claims split
and located by characters, and no causal LM loaded at all; in the API, the CLI on a file
(bad records reported), ``franq fit calibrator`` on its output, and the service. The chat
model is the pinned local server of test_chat_p_true."""
from __future__ import annotations

import contextlib
import json
import threading
import time

import httpx
import pytest
from conftest import run_cli
from servers import ChatHandler, chat_completion, chat_server, serve_in_thread
from test_chat_p_true import REPLIES, _Pinned, _top

import franq
from franq.config import FranqConfig
from franq.pipeline import Franq

Q = "Where is Paris?"
P = ["Paris is the capital of France."]
ANSWER = "Paris is in France. Paris is in Spain."


@pytest.fixture
def server():
    replies = {**REPLIES, "Paris": [("True", 0.9), ("False", 0.1)]}
    with chat_server(_Pinned, replies=replies, fail_first=0, hold=False, both_open=threading.Event(), open=0,
                     max_open=0, lock=threading.Lock()) as srv:
        yield srv


def _table(server) -> dict:
    return {"model": "tiny-chat", "base_url": server.base_url, "api_key_env": "FRANQ_TEST_KEY"}


def _config(server, **more) -> dict:
    return {"mode": "chat", "faithfulness": {"name": "lexical"}, "calibration": {"calibrator": "none"},
            "scorers": {"chat_p_true": _table(server), "chat_p_true_rag": _table(server)}, **more}


def test_chat_mode_loads_no_causal_lm_and_takes_both_terms_from_the_chat_model(server):
    fr = Franq.from_config(FranqConfig.from_dict(_config(server)))
    assert fr.lm is None
    assert fr.components["chat"]["evidence"] == "none" and fr.components["chat"]["claims"] == "atomic"
    res = fr.score(Q, P, ANSWER)
    assert dict(res.stack) == {"model": "none", "faithfulness": "lexical-v1", "uq_faith": "chat_p_true_rag:tiny-chat",
                               "uq_unfaith": "chat_p_true:tiny-chat", "prompt_version": "rag-v1", "mode": "chat"}
    by_text = {c.claim.text: c for c in res.scored}
    assert set(by_text) == {"Paris is in France.", "Paris is in Spain."}
    assert by_text["Paris is in France."].uq_faith == pytest.approx(0.8 / 0.9)
    assert by_text["Paris is in Spain."].uq_unfaith == pytest.approx(0.1 / 0.9)
    spain = by_text["Paris is in Spain."]
    assert spain.p_true_raw == pytest.approx(spain.p_faithful * spain.uq_faith
                                             + (1 - spain.p_faithful) * spain.uq_unfaith)
    asked = [b["messages"][-1]["content"] for b in server.requests]
    assert len(asked) == 4 and sum(a.startswith("Passages:") for a in asked) == 2  # each claim with and without


def test_a_bare_answer_is_asked_with_its_question(server):
    fr = Franq.from_config(FranqConfig.from_dict(_config(server)))
    res = fr.score(Q, P, "Paris")
    assert [c.claim.text for c in res.scored] == ["Paris"] and res.scored[0].uq_unfaith == pytest.approx(0.9)
    assert all(f"Question: {Q}\n Possible answer:Paris\n" in b["messages"][-1]["content"] for b in server.requests)


def test_chat_mode_refuses_what_needs_a_causal_lm_in_one_line(server):
    fr = Franq.from_config(FranqConfig.from_dict(_config(server)))
    with pytest.raises(franq.InputError, match="the long preset needs the causal LM.*mode 'chat'"):
        fr.score(Q, P, ANSWER, mode="long")
    with pytest.raises(franq.InputError, match="franq answer generates with the causal LM, which mode 'chat'"):
        fr.answer(Q, P)
    with pytest.raises(franq.InputError, match=r"uq\.chat\.faith.*'claim_prob' cannot run in the chat preset"):
        Franq.from_config(FranqConfig.from_dict(_config(server, uq={"chat": {"faith": "claim_prob"}})))
    with pytest.raises(franq.InputError, match=r"scorers\.chat_p_true_rag\.model': required when uq\.chat\.faith"):
        Franq.from_config(FranqConfig.from_dict({"mode": "chat", "faithfulness": {"name": "lexical"}}))
    with pytest.raises(franq.InputError, match="decomposer.model': mode 'chat' loads no causal LM"):
        Franq.from_config(FranqConfig.from_dict(_config(server, decomposer={"name": "llm"})))


def test_cli_scores_a_file_in_chat_mode_and_a_calibrator_is_fitted_on_its_output(server, tmp_path, monkeypatch):
    monkeypatch.setenv("FRANQ_TEST_KEY", "sk-test")
    cfg = tmp_path / "chat.json"
    cfg.write_text(json.dumps(_config(server)), encoding="utf-8")
    rows = [{"id": f"r{i}", "question": Q, "passages": P, "answer": ANSWER,
             "claims": [{"text": "Paris is in France.", "is_true": True}, {"text": "Paris is in Spain.", "is_true": False}]}
            for i in range(12)]
    rows.insert(3, {"id": "bad", "question": "", "passages": P, "answer": "x"})
    src, out, cal = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "cal.json"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    r = run_cli("score", str(src), "-o", str(out), "--config", str(cfg), "--quiet")
    assert r.exit_code == 0, r.output
    got = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert len(got) == 12 and all(g["stack"]["mode"] == "chat" and g["stack"]["model"] == "none" for g in got)
    bad = (tmp_path / "out.jsonl.errors.jsonl").read_text(encoding="utf-8")
    assert '"bad"' in bad and "'question' is empty" in bad
    assert len(server.requests) == 4  # two claims, each asked with and without the passages, once per call
    r = run_cli("fit", "calibrator", str(out), "-o", str(cal), "--folds", "2")
    assert r.exit_code == 0, r.output
    fitted = json.loads(cal.read_text(encoding="utf-8"))["fitted_for"]
    assert fitted["mode"] == "chat" and fitted["uq_unfaith"] == "chat_p_true:tiny-chat"
    cfg.write_text(json.dumps(_config(server, calibration={"calibrator": str(cal)})), encoding="utf-8")
    r = run_cli("score", "--config", str(cfg), "--question", Q, "--passage", P[0], "--answer", ANSWER,
                "--format", "json", "--quiet")
    assert r.exit_code == 0, r.output
    rec = json.loads(r.stdout)
    assert rec["calibrator"]["source"] == "user" and all(c["p_true_calibrated"] is not None for c in rec["claims"])


def test_a_chat_service_loads_no_lm(server):
    from franq.apps.serve import create_app

    fr = Franq.from_config(FranqConfig.from_dict(_config(server)))
    with serve_in_thread(create_app(fr)) as url:
        http = httpx.Client(timeout=None)
        health = http.get(f"{url}/health").json()
        assert health["model"] == "none" and health["mode"] == "chat" and set(health["components"]) == {"chat"}
        got = http.post(f"{url}/score", json={"question": Q, "passages": P, "answer": ANSWER}).json()
        assert got["stack"]["mode"] == "chat" and len(got["claims"]) == 2
        r = http.post(f"{url}/score", json={"question": Q, "passages": P, "answer": ANSWER, "mode": "short"})
        assert r.status_code == 400 and "needs the causal LM" in r.json()["detail"]


def test_the_table_says_which_chat_model_scored_and_that_no_causal_lm_ran(server):
    from franq.cli.table import provenance

    res = Franq.from_config(FranqConfig.from_dict(_config(server))).score(Q, P, ANSWER)
    assert provenance(res).startswith("scored by: UQ_faith chat_p_true_rag:tiny-chat / UQ_unfaith "
                                      "chat_p_true:tiny-chat (preset long (chat), no causal LM)")


def test_chat_asked_for_per_call_without_its_tables_is_refused_naming_the_key(tiny_lm, make_franq):
    fr = make_franq(tiny_lm, {})  # a long-mode pipeline: its config names no chat model
    with pytest.raises(franq.InputError, match=r"config 'scorers\.chat_p_true_rag\.model': required when uq\.chat\.faith"
                                               r".*or in 'scorers\.chat_p_true'"):
        fr.score(Q, P, ANSWER, mode="chat")


def test_chat_per_call_on_a_pipeline_with_a_local_model_has_the_same_stack(server, tiny_lm, make_franq):
    config = _config(server)
    config.pop("mode")
    fr = make_franq(tiny_lm, config)  # long mode, the local model loaded
    res = fr.score(Q, P, ANSWER, mode="chat")
    alone = Franq.from_config(FranqConfig.from_dict(_config(server))).score(Q, P, ANSWER)
    assert res.stack == alone.stack and res.stack["model"] == "none"  # a calibrator fitted on one applies to the other
    assert [c.p_true_raw for c in res.scored] == pytest.approx([c.p_true_raw for c in alone.scored])


class _Flaky(ChatHandler):
    """"True" for every claim, a 400 for a claim with "BAD" in it (this request only), a reply
    after 1.5 s for one with "SLOW", and a 503 for everything while ``server.down``."""

    def do_POST(self):
        body = self.read_body()
        with self.server.lock:
            self.server.requests.append(body)
        if self.server.down:
            self.send_json(503, {"error": {"message": "overloaded", "type": "server_error"}})
        elif "SLOW" in body["messages"][-1]["content"]:
            time.sleep(1.5)  # past the scorer's timeout (0.5 s): this record's error, the run goes on
            with contextlib.suppress(OSError):  # the client has hung up by now
                self.send_json(200, chat_completion(body["model"], "True", _top([("True", 0.8), ("False", 0.2)])))
        elif "BAD" in body["messages"][-1]["content"]:
            self.send_json(400, {"error": {"message": "prompt too long", "type": "invalid_request_error"}})
        else:
            self.send_json(200, chat_completion(body["model"], "True", _top([("True", 0.8), ("False", 0.2)])))


def test_a_server_that_fails_every_request_stops_the_batch_and_the_same_command_resumes(tmp_path, monkeypatch):
    """Before, a server that was down made every record a bad record (each with the same
    connection error) and the run ended as if done; a request the server refuses on its own
    (400) is still that record's error."""
    monkeypatch.setenv("FRANQ_TEST_KEY", "sk-test")
    with chat_server(_Flaky, down=True) as srv:
        table = {**_table(srv), "max_retries": 0, "timeout": 0.5}
        cfg = tmp_path / "chat.json"
        cfg.write_text(json.dumps({**_config(srv), "scorers": {"chat_p_true": table, "chat_p_true_rag": table}}),
                       encoding="utf-8")
        rows = [{"id": "a", "question": Q, "passages": P, "answer": "Paris is in France."},
                {"id": "b", "question": Q, "passages": P, "answer": "Paris is BAD."},
                {"id": "c", "question": Q, "passages": P, "answer": "Paris is in Spain."},
                {"id": "d", "question": Q, "passages": P, "answer": "Paris is SLOW."}]
        src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        r = run_cli("score", str(src), "-o", str(out), "--config", str(cfg), "--quiet")
        assert r.exit_code != 0 and "request failed" in r.output and "the same command resumes" in r.output
        assert "Traceback" not in r.output
        assert not out.read_text(encoding="utf-8").strip()
        assert not (tmp_path / "out.jsonl.errors.jsonl").read_text(encoding="utf-8").strip()  # no record blamed
        srv.down = False  # the server is back: the same command
        r = run_cli("score", str(src), "-o", str(out), "--config", str(cfg), "--quiet")
        assert r.exit_code == 0, r.output
        assert [json.loads(x)["id"] for x in out.read_text(encoding="utf-8").splitlines()] == ["a", "c"]
        bad = [json.loads(x) for x in (tmp_path / "out.jsonl.errors.jsonl").read_text(encoding="utf-8").splitlines()]
        assert [b["id"] for b in bad] == ["b", "d"] and "prompt too long" in bad[0]["error"]
        assert "raise its 'timeout'" in bad[1]["error"]


def test_the_service_answers_502_when_the_chat_server_fails_every_request_and_504_on_a_timeout(monkeypatch):
    from franq.apps.serve import create_app

    monkeypatch.setenv("FRANQ_TEST_KEY", "sk-test")
    with chat_server(_Flaky, down=True) as srv:
        table = {**_table(srv), "max_retries": 0, "timeout": 0.5}
        fr = Franq.from_config(FranqConfig.from_dict({**_config(srv), "scorers": {"chat_p_true": table,
                                                                                  "chat_p_true_rag": table}}))
        with serve_in_thread(create_app(fr)) as url:
            r = httpx.post(f"{url}/score", json={"question": Q, "passages": P, "answer": ANSWER}, timeout=None)
            assert r.status_code == 502 and "request failed" in r.json()["detail"]
            srv.down = False
            r = httpx.post(f"{url}/score", json={"question": Q, "passages": P, "answer": "Paris is SLOW."}, timeout=None)
            assert r.status_code == 504 and "raise its 'timeout'" in r.json()["detail"]
            assert httpx.post(f"{url}/score", json={"question": Q, "passages": P, "answer": ANSWER},
                              timeout=None).status_code == 200


def test_the_modes_are_listed_once_and_the_openapi_schema_names_them_all():
    import typing

    from franq.apps.serve_schema import Mode

    literal = next(a for a in typing.get_args(Mode) if typing.get_origin(a) is typing.Literal)
    assert typing.get_args(literal) == FranqConfig.MODES and "chat" in FranqConfig.MODES


def test_franq_score_with_mode_chat_is_refused_before_any_model_loads(monkeypatch):
    from franq import pipeline

    monkeypatch.setattr(pipeline, "default_franq", lambda: pytest.fail("the default pipeline was loaded"))
    with pytest.raises(franq.InputError, match="names no chat model; build a pipeline with one"):
        franq.score(Q, P, ANSWER, mode="chat")


def test_a_failed_record_does_not_make_the_batch_ask_the_server_again(tmp_path, monkeypatch):
    """One record's refused request fails its batch's call; the runner scores the batch again
    record by record, and the other records' claims are answered from what the failed call
    got, not asked again: each claim's request, with and without the passages, goes once."""
    monkeypatch.setenv("FRANQ_TEST_KEY", "sk-test")
    with chat_server(_Flaky, down=False) as srv:
        table = {**_table(srv), "max_retries": 0}
        cfg = tmp_path / "chat.json"
        cfg.write_text(json.dumps({**_config(srv), "scorers": {"chat_p_true": table, "chat_p_true_rag": table}}),
                       encoding="utf-8")
        rows = [{"id": "a", "question": Q, "passages": P, "answer": "Paris is in France. It is on the Seine."},
                {"id": "b", "question": Q, "passages": P, "answer": "Paris is BAD."},
                {"id": "c", "question": Q, "passages": P, "answer": "Paris is in Spain."}]
        src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        r = run_cli("score", str(src), "-o", str(out), "--config", str(cfg), "--quiet")
        assert r.exit_code == 0, r.output
        assert [json.loads(x)["id"] for x in out.read_text(encoding="utf-8").splitlines()] == ["a", "c"]
        asked = [b["messages"][-1]["content"] for b in srv.requests]
        good = [m for m in asked if "BAD" not in m]
        assert len(good) == 6 and len(set(good)) == 6  # 3 claims x (with, without passages), each once
        assert sum("BAD" in m for m in asked) == 2  # the failing claim is asked in the batch and again alone


def test_one_chat_model_is_written_once_its_rag_table_reads_the_other(server):
    """``[scorers.chat_p_true_rag]`` left out: its settings come from ``[scorers.chat_p_true]``
    (``settings_from``); a key it gives itself wins (two models)."""
    fr = Franq.from_config(FranqConfig.from_dict({**_config(server), "scorers": {"chat_p_true": _table(server)}}))
    res = fr.score(Q, P, ANSWER)
    assert res.stack["uq_faith"] == "chat_p_true_rag:tiny-chat" and res.stack["uq_unfaith"] == "chat_p_true:tiny-chat"
    with_passages = [b for b in server.requests if "Passages:" in b["messages"][-1]["content"]]
    assert with_passages and all(b["model"] == "tiny-chat" for b in with_passages)
    two = FranqConfig.from_dict({**_config(server), "scorers": {"chat_p_true": _table(server),
                                                                "chat_p_true_rag": {"model": "big-chat"}}})
    assert two.settings_for("scorers", "chat_p_true_rag")["model"] == "big-chat"
    assert two.settings_for("scorers", "chat_p_true_rag")["base_url"] == server.base_url  # the rest from chat_p_true
    assert FranqConfig.from_dict({"scorers": {"chat_p_true": {"concurrency": 2}}}).settings_for(
        "scorers", "chat_p_true")["concurrency"] == 2
