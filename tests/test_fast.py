"""The fast preset (issue 46.3): the verifier alone on each claim's closest passage windows,
no causal LM loaded, with its own shipped calibrator; in the CLI (``--fast``), the API
(``mode="fast"``), the service (a request's ``mode``, ``--fast``) and the adapters
(``scorer="fast"``)."""
from __future__ import annotations

import json

import httpx
import numpy as np
import pytest
from conftest import GOOD, make_franq, run_cli
from servers import serve_in_thread

import franq
from calibration.contract import ClaimInputs
from franq.config import FranqConfig
from franq.pipeline import Franq
from franq.presets import FAST_TOP_WINDOWS
from franq.verifier.combiner import COMBINER_FILE
from franq.verifier.windows import Window, closest_windows

Q = "When was the Eiffel Tower built?"
P = ["The Eiffel Tower was built from 1887 to 1889 in Paris.", "Bananas are yellow fruit grown in the tropics."]


def _config(verifier_dir, **more) -> FranqConfig:
    return FranqConfig.from_dict({"mode": "fast", "faithfulness": {"name": "verifier",
                                                                   "verifier": {"model": str(verifier_dir)}},
                                  "calibration": {"calibrator": "none"}, **more})


def test_closest_windows_keep_the_k_sharing_most_content_words_in_passage_order():
    ws = [Window(0, 0, 1, "Bananas are yellow."), Window(0, 1, 2, "The tower was built in 1889."),
          Window(1, 0, 1, "Paris has a tower built by Eiffel."), Window(1, 1, 2, "Nothing here.")]
    got = closest_windows(ws, "The Eiffel tower was built in 1889.", 2)
    assert got == [ws[1], ws[2]]  # passage order kept
    assert closest_windows(ws, "anything", 10) == ws


def test_a_verifier_with_top_windows_reads_only_those(verifier_dir):
    from franq.faithfulness.verifier import VerifierFaithfulness
    from franq.verifier.model import Verifier

    items = [(P, "The tower was built in 1889.")]
    every = Verifier(verifier_dir, window_words=4).window_probabilities(items)[0][0]
    [(ws, probs)] = Verifier(verifier_dir, window_words=4, top_windows=2).window_probabilities(items)
    assert len(every) > 2 and len(ws) == 2 and probs.shape == (2, 3)
    backend = VerifierFaithfulness(verifier_dir)
    narrowed = backend.with_top_windows(3)
    assert narrowed.name == backend.name + ":top3" and narrowed.verifier.model is backend.verifier.model
    assert backend.verifier.top_windows is None  # the pipeline's own backend is left as it was
    assert VerifierFaithfulness(verifier_dir, top_windows=3).name == narrowed.name
    with pytest.raises(franq.InputError, match="top_windows"):
        Verifier(verifier_dir, top_windows=0)


def test_fast_loads_no_causal_lm_and_reads_the_closest_windows(verifier_dir):
    fr = Franq.from_config(_config(verifier_dir))
    assert fr.lm is None
    res = fr.score(Q, P, "The tower was built from 1887 to 1889. It stands in Paris.")
    assert res.stack["mode"] == "fast" and res.stack["model"] == "none"
    assert res.stack["faithfulness"].endswith(f":top{FAST_TOP_WINDOWS}")
    assert fr.components["fast"]["faithfulness"] == res.stack["faithfulness"]
    assert len(res.scored) == 2 and all(0 <= c.p_true_raw <= 1 and c.uq_faith is None for c in res.scored)
    assert all(c.p_true_raw == c.p_faithful for c in res.scored)  # no UQ term: the raw mix is P_supported
    from franq.cli.table import provenance
    assert provenance(res).startswith("scored by: the verifier alone (preset fast, no causal LM)")
    assert provenance(res).endswith("P(true) raw = P_faith")  # not the long form's mix, which it did not run
    with pytest.raises(franq.InputError, match="mode 'fast'"):
        fr.score(Q, P, "The tower was built in 1889.", mode="long")


def test_fast_reads_a_short_answer_whole_with_its_question_under_its_own_preset():
    fr = Franq(FranqConfig.from_dict({"mode": "fast", "faithfulness": {"name": "lexical"},
                                      "calibration": {"calibrator": "none"}}), None)
    short, long_answer = fr.score_many([{"question": Q, "passages": P, "answer": "1889"},
                                        {"question": Q, "passages": P,
                                         "answer": "The tower was built in 1889. Bananas are yellow."}])
    assert [c.claim.text for c in short.claims] == ["1889"] and len(short.scored) == 1
    assert short.stack["mode"] == "fast_short" and short.mode == "short"
    assert long_answer.stack["mode"] == "fast" and len(long_answer.claims) == 2
    given = fr.score(Q, P, "1889", claims=["1889"])  # given claims are never read whole
    assert given.stack["mode"] == "fast"


def test_cli_fast_and_its_conflict_with_another_mode():
    r = run_cli("score", "--fast", "--faithfulness", "lexical", "--calibrator", "none", "--question", GOOD["question"],
                "--passage", GOOD["passages"][0], "--answer", GOOD["answer"], "--format", "json", "--quiet")
    assert r.exit_code == 0, r.output
    rec = json.loads(r.stdout)
    assert rec["stack"]["mode"] == "fast" and rec["stack"]["model"] == "none" and rec["claims"]
    r = run_cli("score", "--fast", "--mode", "long", "--faithfulness", "lexical", "--example")
    assert r.exit_code == 2 and "--fast is --mode fast; it cannot go with --mode long" in r.output


def test_cli_fast_scores_a_jsonl_file_in_batches_reporting_a_bad_record(tmp_path):
    """The batch runner sizes its batches by the model's tokenizer; the fast stack loads no
    model, so it estimates from the text (franq.runners.base.rough_tokens)."""
    rows = [{**GOOD, "id": "a"}, {"id": "b", "question": "", "passages": [], "answer": "x"},
            {"id": "c", "question": Q, "passages": P, "answer": "It was built from 1887 to 1889. It is in Paris."}]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    r = run_cli("score", str(src), "-o", str(out), "--fast", "--faithfulness", "lexical", "--calibrator", "none",
                "--quiet", "--batch-tokens", "8")  # a budget this small: one answer per batch
    assert r.exit_code == 0, r.output
    got = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [g["id"] for g in got] == ["a", "c"] and all(g["stack"]["model"] == "none" for g in got)
    assert {g["stack"]["mode"] for g in got} <= {"fast", "fast_short"} and all(g["claims"] for g in got)
    bad = [json.loads(x) for x in (tmp_path / "out.jsonl.errors.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [b["id"] for b in bad] == ["b"] and "'question' is empty" in bad[0]["error"]


def test_rough_tokens_stand_in_for_a_tokenizer():
    from franq.io import Example
    from franq.runners.base import rough_tokens, token_estimate
    from franq.types import Passage

    assert len(rough_tokens("")) == 1 and len(rough_tokens("x" * 40)) == 11
    ex = Example(question="q" * 8, passages=(Passage(text="p" * 40),), answer="a" * 8)
    assert token_estimate(rough_tokens, ex) == 2 * (3 + 3) + 11


def test_api_score_fast_builds_the_fast_pipeline_only(monkeypatch):
    from franq import pipeline

    calls = []

    class Fake:
        def score(self, question, passages, answer, *, claims=None):
            calls.append((question, answer))
            return "scored"

    monkeypatch.setattr(pipeline, "fast_franq", lambda: Fake())
    monkeypatch.setattr(pipeline, "default_franq", _not_loaded())
    assert franq.score(Q, P, "1889", mode="fast") == "scored" and calls == [(Q, "1889")]


def _not_loaded():
    def default_franq():
        raise AssertionError("the default pipeline (with its causal LM) was loaded for mode='fast'")
    default_franq.cache_info = lambda: type("Info", (), {"currsize": 0})()
    return default_franq


def test_adapters_take_scorer_fast(monkeypatch):
    from franq.apps.integrations.scores import scorer_of

    seen = []
    monkeypatch.setattr(franq, "score", lambda q, p, a, mode=None: seen.append(mode) or "r")
    assert scorer_of("fast")(Q, P, "1889") == "r" and scorer_of(None)(Q, P, "1889") == "r"
    assert seen == ["fast", None]
    with pytest.raises(franq.InputError, match="or 'fast'"):
        scorer_of("quick")


def test_service_scores_a_request_in_fast_mode(tiny_lm):
    from franq.apps.serve import create_app

    with serve_in_thread(create_app(make_franq(tiny_lm))) as url:
        http = httpx.Client(timeout=None)
        body = {"question": Q, "passages": P, "answer": "The tower was built in 1889. It stands in Paris."}
        r = http.post(f"{url}/score", json={**body, "mode": "fast"})
        assert r.status_code == 200, r.text
        assert r.json()["stack"]["mode"] == "fast" and r.json()["stack"]["uq_faith"] == "none"
        assert http.post(f"{url}/score", json=body).json()["stack"]["mode"] == "long"


def test_a_fast_service_loads_no_lm_and_refuses_another_mode_in_one_line():
    from franq.apps.serve import create_app

    fr = Franq(FranqConfig.from_dict({"mode": "fast", "faithfulness": {"name": "lexical"},
                                      "calibration": {"calibrator": "none"}}), None)
    with serve_in_thread(create_app(fr)) as url:
        http = httpx.Client(timeout=None)
        health = http.get(f"{url}/health").json()
        assert health["model"] == "none" and health["mode"] == "fast" and set(health["components"]) == {
            "fast", "fast_short"}
        body = {"question": Q, "passages": P, "answer": "The tower was built in 1889."}
        assert http.post(f"{url}/score", json=body).json()["stack"]["mode"] == "fast_short"
        r = http.post(f"{url}/score", json={**body, "mode": "long"})
        assert r.status_code == 400 and "needs the causal LM" in r.json()["detail"] and "\n" not in r.json()["detail"]


def test_the_real_serve_command_starts_in_fast_mode_and_scores():
    """``franq serve --fast`` as a user starts it (its start-up line named ``pipeline.lm``,
    None in the fast mode: an AttributeError before it listened)."""
    import os
    import subprocess
    import sys
    import time

    from servers import free_port

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "franq", "serve", "--fast", "--faithfulness", "lexical",
                             "--calibrator", "none", "--port", str(port)], stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "FRANQ_SERVE_TOKEN": ""})
    http = httpx.Client(timeout=30)
    try:
        while True:  # until it listens (or dies: then its stderr says why)
            if proc.poll() is not None:
                pytest.fail(f"franq serve --fast exited with {proc.returncode}: {proc.stderr.read()}")
            try:
                health = http.get(f"http://127.0.0.1:{port}/health").json()
                break
            except httpx.TransportError:
                time.sleep(0.1)
        assert health["model"] == "none" and health["mode"] == "fast"
        body = {"question": Q, "passages": P, "answer": "The tower was built in 1889. It stands in Paris."}
        r = http.post(f"http://127.0.0.1:{port}/score", json=body)
        assert r.status_code == 200 and r.json()["stack"]["mode"] == "fast" and r.json()["claims"]
    finally:
        proc.terminate()
        proc.wait()
    log = proc.stderr.read()
    assert "the verifier alone (fast mode, no causal LM) on http://127.0.0.1:" in log and "Traceback" not in log


def test_serve_fast_flag_conflicts_with_another_mode():
    r = run_cli("serve", "--fast", "--mode", "short")
    assert r.exit_code == 2 and "--fast is --mode fast" in r.output


def test_the_shipped_fast_calibrators_are_fitted_for_the_shipped_verifier_on_its_closest_window():
    from franq.fit.shipped import data_dir
    from franq.fit.shipped_fast import NAMES
    from franq.verifier.model import read_card, shipped_verifier_dir

    card = read_card(shipped_verifier_dir())
    rule = (card.get("aggregation") or {}).get("rule", "relevant")
    slots = ":slots" if (shipped_verifier_dir() / COMBINER_FILE).is_file() else ""  # the slot check, on by default
    for preset, name in NAMES.items():
        cal = json.loads((data_dir() / name).read_text(encoding="utf-8"))
        assert cal["fitted_for"] == {"model": "none",
                                     "faithfulness": f"verifier:{card['name']}:{rule}{slots}:top{FAST_TOP_WINDOWS}",
                                     "uq_faith": "none", "uq_unfaith": "none", "prompt_version": "none", "mode": preset}
    assert "nq-open-train" in json.loads((data_dir() / NAMES["fast_short"]).read_text())["description"]
    # each file states how it does on the dev sets it was not fitted on, on its own preset's claims
    ev = {preset: json.loads((data_dir() / name).read_text())["evaluation"] for preset, name in NAMES.items()}
    assert {"expertqa-heldout (label: true)", "wice-heldout (label: supported)"} <= set(ev["fast"])
    assert set(ev["fast_short"]) == {"nq-open-test (label: true)", "nq-open-test-gold (label: true)"}


def test_a_fast_files_evaluation_reads_the_claims_its_preset_scored():
    import numpy as np

    from calibration.contract import ClaimInputs
    from calibration.franq import FranqCalibrator
    from franq.fit.shipped_fast import dev_evaluation

    rng = np.random.default_rng(0)
    y = (rng.random(300) < 0.7).astype(float)
    p = np.clip(rng.normal(0.4 + 0.3 * y, 0.2), 0.01, 0.99)
    cal = FranqCalibrator(variant="none", calibrate_faithfulness=True).fit(ClaimInputs(p, np.ones(300), np.zeros(300)),
                                                                         y, is_faithful=y)
    preset = np.array(["fast"] * 200 + ["fast_short"] * 100, dtype=object)
    parts = {"dev": {"p": p, "y": y, "preset": preset}, "wice-x": {"p": p[:50], "y": np.ones(50), "preset": preset[:50]}}
    ev = dev_evaluation(cal, parts, "fast")
    assert ev["dev (label: true)"]["claims"] == 200 and ev["dev (label: true)"]["auroc"] > 0.7
    assert ev["wice-x (label: supported)"]["auroc"] is None and ev["wice-x (label: supported)"]["share_true"] == 1.0
    assert list(dev_evaluation(cal, parts, "fast_short")) == ["dev (label: true)"]


def test_the_fast_short_map_reads_model_and_gold_answers_so_a_supported_answer_is_not_pushed_false():
    """Fitted on the embedded model's nq-open answers alone (9% right), every short answer
    mapped to P(true) <= .27: a right answer the passages support was ``likely_false``
    (experiments/2026-11-28-fast-short-base-rate). Its fit sets hold each question's gold
    answer beside the model's."""
    from pathlib import Path

    import numpy as np

    from calibration.contract import ClaimInputs
    from calibration.franq import FranqCalibrator
    from franq.fit.shipped import data_dir
    from franq.fit.shipped_fast import FIT_SETS, NAMES, labelled_sets

    assert FIT_SETS["fast_short"] == ("nq-open-train", "nq-open-train-gold")
    got = labelled_sets(Path(__file__).resolve().parents[1] / "datasets", FIT_SETS["fast_short"])
    model, gold = got["nq-open-train"], got["nq-open-train-gold"]
    assert 0 < np.mean([y for _, y in model]) < 0.2 and {y for _, y in gold} == {True} and len(gold) >= len(model)
    assert {r["question"] for r, _ in model} <= {r["question"] for r, _ in gold}
    cal = FranqCalibrator.from_json(data_dir() / NAMES["fast_short"])
    p_s = np.array([0.05, 0.5, 0.95])
    q = cal.predict(ClaimInputs(p_s, np.ones(3), np.zeros(3)))
    assert np.all(np.diff(q) >= 0) and 0 < q[0] and q[-1] < 1 and q[-1] > 0.5


def test_fit_calibrator_on_fast_output_fits_the_fast_maps_kind_on_truth_labels(tmp_path):
    """``franq fit calibrator`` on ``--fast`` output (it failed: "unknown scorer 'none'"):
    an isotonic map of P_supported to P(true), fitted on the truth labels, as the shipped
    fast calibrators are (support labels, which a user may also give, are not what it maps to)."""
    from calibration.franq import FranqCalibrator

    rows = []
    for r in range(20):
        supported = "The tower was built from 1887 to 1889 in Paris."
        rows.append({"id": f"s{r}", "question": Q, "passages": P, "answer": supported,
                     "claims": [{"text": supported, "is_true": True, "is_faithful": r % 2 == 0}]})
        other = "Bananas are blue metal from the moon."
        rows.append({"id": f"o{r}", "question": Q, "passages": P, "answer": other,
                     "claims": [{"text": other, "is_true": r % 4 == 0, "is_faithful": False}]})
    rows.append({"id": "short", "question": Q, "passages": P, "answer": "In 1889."})  # fast_short, unlabelled
    raw = tmp_path / "labelled.jsonl"
    raw.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    scored, cal_path = tmp_path / "scored.jsonl", tmp_path / "cal.json"
    r = run_cli("score", str(raw), "-o", str(scored), "--fast", "--faithfulness", "lexical", "--calibrator", "none",
                "--quiet")
    assert r.exit_code == 0, r.output
    r = run_cli("fit", "calibrator", str(scored), "-o", str(cal_path), "--folds", "2", "--preset", "fast")
    assert r.exit_code == 0 and "--preset fast: 40 records scored by it" in r.output, r.output
    r = run_cli("fit", "calibrator", str(scored), "-o", str(cal_path), "--folds", "2")  # the unlabelled
    assert r.exit_code == 0, r.output  # fast_short record takes no part, so the two presets do not clash
    assert "fitting the fast mode's calibrator: an isotonic map of P_supported" in r.output
    assert "'unlabelled': 1" in r.output
    obj = json.loads(cal_path.read_text(encoding="utf-8"))
    assert obj["variant"] == "none" and obj["fitted_for"]["uq_faith"] == "none" and obj["faithfulness"]
    cal = FranqCalibrator.from_json(cal_path)
    got = [json.loads(x) for x in scored.read_text(encoding="utf-8").splitlines()][:-1]  # less the short answer
    p_s = np.array([g["claims"][0]["p_faithful"] for g in got])
    q = cal.predict(ClaimInputs(p_s, np.ones(len(p_s)), np.zeros(len(p_s))))
    supported = np.array([g["id"].startswith("s") for g in got])
    assert q[supported].min() > 0.9 and q[~supported].max() < 0.5  # P(true): all true / a quarter true
    r = run_cli("score", "--fast", "--faithfulness", "lexical", "--calibrator", str(cal_path), "--question", Q,
                "--passage", P[0], "--answer", "The tower was built from 1887 to 1889 in Paris. Bananas are blue "
                "metal from the moon.", "--format", "json", "--quiet")  # two claims: the fast preset (given claims too)
    assert r.exit_code == 0 and json.loads(r.stdout)["calibrator"]["source"] == "user", r.output
    r = run_cli("fit", "calibrator", str(scored), "-o", str(tmp_path / "c3.json"), "--three-condition",
                "--preset", "fast")
    assert r.exit_code != 0 and "scored by the fast mode (no UQ scorer)" in r.output and "Traceback" not in r.output


def test_short_answers_labelled_whole_fit_the_fast_short_calibrator(tmp_path):
    """A short answer is labelled as a whole (``is_true`` on the record: no claims to label);
    the label reaches its one claim where a short preset reads it whole."""
    rows = [{"id": f"a{r}", "question": Q, "passages": P, "answer": "1889" if r % 2 else "1950",
             "is_true": bool(r % 2)} for r in range(24)]
    rows.append({"id": "long", "question": Q, "passages": P, "is_true": True,  # a long answer: not read whole,
                 "answer": "The tower was built in 1889. It stands in Paris."})  # so its claims stay unlabelled
    raw, scored = tmp_path / "short.jsonl", tmp_path / "scored.jsonl"
    raw.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    r = run_cli("score", str(raw), "-o", str(scored), "--fast", "--faithfulness", "lexical", "--calibrator", "none",
                "--quiet")
    assert r.exit_code == 0, r.output
    got = [json.loads(x) for x in scored.read_text(encoding="utf-8").splitlines()]
    assert [g["is_true"] for g in got] == [x["is_true"] for x in rows]  # passed through
    r = run_cli("fit", "calibrator", str(scored), "-o", str(tmp_path / "cal.json"), "--folds", "2",
                "--min-per-condition", "5")
    assert r.exit_code == 0, r.output
    assert "on 24 labelled claims (12 true, 12 false" in r.output and "'unlabelled': 2" in r.output
    cal = json.loads((tmp_path / "cal.json").read_text(encoding="utf-8"))
    assert cal["fitted_for"]["mode"] == "fast_short"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**rows[0], "is_true": "yes"}) + "\n", encoding="utf-8")
    r = run_cli("score", str(bad), "-o", str(tmp_path / "b.jsonl"), "--fast", "--faithfulness", "lexical",
                "--calibrator", "none", "--quiet")
    errors = (tmp_path / "b.jsonl.errors.jsonl").read_text(encoding="utf-8")
    assert "line 1: 'is_true' must be true, false or null, got str" in errors


def test_a_config_naming_a_served_model_still_runs_fast(verifier_dir):
    """--fast on a config written for a served model: the served checks walk the mode's
    scorers, and the fast presets have none (this was an AttributeError)."""
    config = _config(verifier_dir, model={"server": "http://127.0.0.1:9/v1", "served_model": "m",
                                          "engine": "vllm", "tokenizer": "embedded"})
    fr = Franq.from_config(config)
    assert fr.lm is None and fr.score(Q, P, "The tower was built from 1887 to 1889.").scored
