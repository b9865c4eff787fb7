"""Closed-book internals, semantic entropy probes and the probe preset (short form
without samples), and probe files as safetensors."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import assert_float32_close
from franq.cli import main
from franq.errors import InputError
from franq.evidence.passes import TokenPasses
from franq.internals import capture_for, claim_features
from franq.io import Example, parse_example
from franq.lm.capture import CaptureSpec
from franq.internals.probe_file import Probe, ProbeFile
from franq.fit.probe import entropy_split, parse_feature_specs, target_labels
from franq.types import Passage

PASSAGE = "The Eiffel Tower is in Paris, France. It was built from 1887 to 1889 by Gustave Eiffel."
QA = [("Where is the tower?", "Paris", 0.0), ("When was it built?", "1950", 1.9), ("Who built it?", "Eiffel", 0.3),
      ("Where is it?", "Lyon", 1.6)]


def test_entropy_split_minimizes_the_within_group_squared_deviation():
    # low {0, 0, 0.1} and high {1.5, 1.6}: 0.0067 + 0.005; any other cut costs more
    assert entropy_split([1.6, 0.0, 0.1, 1.5, 0.0]) == 1.5
    y, info = target_labels("low_semantic_entropy", {"semantic_entropy": np.array([0.0, np.nan, 2.0, 1.9])})
    assert info == {"semantic_entropy_threshold": 1.9}
    np.testing.assert_array_equal(y[[0, 2, 3]], [1.0, 0.0, 0.0]) and np.isnan(y[1])
    with pytest.raises(InputError, match="same value"):
        entropy_split([0.5, 0.5])


def test_feature_specs_name_the_pass_and_the_pooling():
    assert parse_feature_specs("hidden_diff:1+0@last, hidden_closed:2") == [
        {"kind": "hidden_diff", "layers": [1, 0], "pool": "last"}, {"kind": "hidden_closed", "layers": [2]}]
    assert capture_for({"kind": "hidden_diff", "layers": [1]}) == CaptureSpec(False, (1,), (1,))
    assert capture_for({"kind": "hidden_closed", "layers": [1]}) == CaptureSpec(False, (), (1,))
    with pytest.raises(InputError, match="features.pool"):
        parse_feature_specs("hidden:1@first")


def test_a_claim_label_semantic_entropy_is_a_number_named_in_errors():
    rec = {"question": "q", "passages": ["p"], "answer": "a", "claims": [{"text": "a", "semantic_entropy": 0.7}]}
    assert parse_example(rec).claim_labels == ({"semantic_entropy": 0.7},)
    for bad in (-1, "high", True):
        rec["claims"][0]["semantic_entropy"] = bad
        with pytest.raises(InputError, match=r"claims\[0\]\.semantic_entropy' must be a number >= 0"):
            parse_example(rec, "line 3")


def test_the_closed_book_pass_keeps_its_hidden_states_and_the_scores_stay_exact(tiny_lm, make_franq):
    fr = make_franq(tiny_lm)
    ex = Example("Where is the tower?", (Passage(PASSAGE),), "The tower is in Paris.")
    [plain] = fr.claim_evidence([ex])
    [got] = fr.claim_evidence([ex], capture=CaptureSpec(attention=False, hidden_layers=(1,),
                                                         closed_hidden_layers=(0, 1)))
    e, p = got[0], plain[0]
    np.testing.assert_array_equal(e.rag_logprobs, p.rag_logprobs)
    np.testing.assert_array_equal(e.closed_logprobs, p.closed_logprobs)
    assert sorted(e.internals.hidden) == [1] and sorted(e.closed_internals.hidden) == [0, 1]
    # the closed-book states are those of a captured pass over the closed-book prompt
    closed = tiny_lm.closed_book_prompt(ex.question)
    _, [ref] = tiny_lm.captured_logprobs([(closed.ids, tiny_lm.encode_answer(ex.answer)[0])],
                                         CaptureSpec(False, (1,)))
    assert_float32_close(e.closed_internals.hidden[1], ref.hidden[1])
    pos = list(e.claim.token_positions)
    diff = claim_features({"kind": "hidden_diff", "layers": [1]}, [e])[0]
    assert_float32_close(diff, e.internals.hidden[1][pos].mean(0) - e.closed_internals.hidden[1][pos].mean(0))
    last = claim_features({"kind": "hidden_closed", "layers": [1], "pool": "last"}, [e])[0]
    np.testing.assert_allclose(last, e.closed_internals.hidden[1][pos[-1]], rtol=1e-6)
    with pytest.raises(ValueError, match="no closed-book internals"):
        claim_features({"kind": "hidden_closed", "layers": [1]}, plain)


def test_token_passes_without_the_closed_book_pass_skip_its_capture(tiny_lm, make_franq):
    fr = make_franq(tiny_lm)
    ex = Example("Where is the tower?", (Passage(PASSAGE),), "Paris.")
    [[e]] = fr.claim_evidence([ex], capture=CaptureSpec(False, (), (1,)), closed_book=False)
    assert e.closed_logprobs is None and e.closed_internals is None and e.internals is None
    assert TokenPasses(tiny_lm, capture=CaptureSpec(False, (), (1,))).capture.closed == CaptureSpec(False, (1,))


@pytest.fixture(scope="module")
def se_probe(tiny_lm_path, tmp_path_factory):
    """Semantic entropy probes fitted by the CLI on whole short answers, as safetensors."""
    tmp = tmp_path_factory.mktemp("se-probe")
    data = tmp / "entropies.jsonl"
    with open(data, "w", encoding="utf-8") as f:
        for r in range(6):
            for i, (q, a, se) in enumerate(QA):
                f.write(json.dumps({"id": f"{r}-{i}", "question": q, "passages": [PASSAGE], "answer": a,
                                    "claims": [{"text": a, "semantic_entropy": se + 0.01 * r}]}) + "\n")
    out = tmp / "se.safetensors"
    res = CliRunner().invoke(main, ["fit", "probe", str(data), "-o", str(out), "--model", str(tiny_lm_path),
                                    "--device", "cpu", "--features", "hidden:1@last,hidden_closed:1@last",
                                    "--folds", "3"])
    assert res.exit_code == 0, res.output
    return out, res.output


def test_fit_probe_fits_semantic_entropy_probes_on_both_passes(se_probe, tiny_lm_path):
    out, output = se_probe
    probes = ProbeFile.load(out)
    assert probes.model == str(tiny_lm_path)
    assert [(p.target, p.label) for p in probes.probes] == [("low_semantic_entropy", "hidden:1@last"),
                                                            ("low_semantic_entropy", "hidden_closed:1@last")]
    p = probes.probes[0]
    # the split of 0..0.35 (low) from 1.6..1.95 (high), recorded with the probe
    assert p.fitted_on["semantic_entropy_threshold"] == 1.6 and p.fitted_on["positive_rate"] == 0.5
    assert p.fitted_on["n_claims"] == 24 and len(p.coef) == 32 and "CV AUROC" in output
    report = json.loads(out.with_suffix(".report.json").read_text())
    assert report["probes"][1]["features"] == "hidden_closed:1@last"


def test_probe_files_round_trip_as_safetensors_and_json(tmp_path):
    probe = Probe("is_true", {"kind": "hidden_diff", "layers": [3, 5], "pool": "last"}, (0.5, -1.0), (2.0, 1.0),
                  (0.25, -0.75), 0.1, {"data_sha256": "ab" * 32, "n_claims": 10}, {"auroc": 0.7, "C": 0.1})
    pf = ProbeFile("model-x", (probe, Probe("is_faithful", {"kind": "lookback"}, (0.0,), (1.0,), (1.0,), -0.5)))
    pf.save(tmp_path / "p.safetensors")
    pf.save(tmp_path / "p.json")
    assert ProbeFile.load(tmp_path / "p.safetensors") == pf == ProbeFile.load(tmp_path / "p.json")
    from safetensors import safe_open

    with safe_open(str(tmp_path / "p.safetensors"), framework="numpy") as f:
        assert sorted(f.keys()) == [f"probe.{k}.{a}" for k in (0, 1) for a in ("coef", "mean", "scale")]
    (tmp_path / "bad.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(InputError, match="not a valid safetensors probe file"):
        ProbeFile.load(tmp_path / "bad.safetensors")


def test_the_probe_preset_scores_a_short_answer_without_samples(se_probe, tiny_lm, make_franq, monkeypatch):
    out, _ = se_probe
    fr = make_franq(tiny_lm, {"mode": "short", "model": {"probe_file": str(out)}, "uq": {"short_scoring": "probe"},
                              "faithfulness": {"name": "lexical"}, "calibration": {"calibrator": "none"}})
    assert list(fr.components) == ["probe"] and fr.components["probe"]["evidence"] == "passes"

    def no_sampling(*args, **kwargs):
        raise AssertionError("the probe preset draws no samples")

    monkeypatch.setattr(tiny_lm, "sample", no_sampling)
    res = fr.score("Where is the tower?", [PASSAGE], "Paris")
    [c] = res.scored
    assert res.mode == "short" and res.stack["mode"] == "probe" and res.stack["uq_faith"] == "se_probe"
    [[e]] = fr.claim_evidence([Example("Where is the tower?", (Passage(PASSAGE),), "Paris")],
                              capture=CaptureSpec(False, (1,), (1,)))
    probes = ProbeFile.load(out).probes
    assert c.uq_faith == pytest.approx(float(probes[0].predict(claim_features(probes[0].features, [e]))[0]))
    assert c.uq_unfaith == pytest.approx(float(probes[1].predict(claim_features(probes[1].features, [e]))[0]))
    assert set(c.signals) == {"p_low_se_probe", "p_low_se_probe_closed"}


def test_answering_in_the_probe_preset_generates_only_the_greedy_answer(se_probe, tiny_lm, make_franq, monkeypatch):
    out, _ = se_probe
    fr = make_franq(tiny_lm, {"mode": "short", "model": {"probe_file": str(out)}, "uq": {"short_scoring": "probe"},
                              "faithfulness": {"name": "lexical"}, "calibration": {"calibrator": "none"}})
    draws = []
    sample = tiny_lm.sample
    monkeypatch.setattr(tiny_lm, "sample", lambda ids, n, **kw: draws.append(n) or sample(ids, n, **kw))
    res = fr.answer("Where is the tower?", [PASSAGE])
    assert draws == [1] and res.stack["mode"] == "probe" and len(res.scored) == 1


def test_the_probe_preset_needs_semantic_entropy_probes(tiny_lm, make_franq, tmp_path):
    path = tmp_path / "faith-only.json"
    ProbeFile("x", (Probe("is_faithful", {"kind": "lookback"}, (0.0,), (1.0,), (1.0,), 0.0),)).save(path)
    with pytest.raises(InputError, match="fitted for model 'x'"):
        make_franq(tiny_lm, {"mode": "short", "model": {"probe_file": str(path)}, "uq": {"short_scoring": "probe"}})
    data = json.loads(path.read_text())
    data["model"] = tiny_lm.name
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="no hidden probe for low_semantic_entropy"):
        make_franq(tiny_lm, {"mode": "short", "model": {"probe_file": str(path)}, "uq": {"short_scoring": "probe"}})


def test_a_calibrator_ships_for_the_probe_preset_on_the_shipped_verifier_stack():
    """Issue 45 item 5: the probe preset with the default backend (the shipped verifier, slot
    check on) is calibrated by a shipped file fitted on answers the embedded model did not
    write (experiments/2026-11-29-probe-verifier-calibrator); before, its results said
    ``calibration: none``."""
    from franq.calibrate import default_calibrator_path
    from franq.fit.shipped_pairs import PROBE_NAME
    from franq.lm.load import EMBEDDED_NAME
    from franq.verifier.combiner import COMBINER_FILE
    from franq.verifier.model import read_card, shipped_verifier_dir

    card = read_card(shipped_verifier_dir())
    rule = (card.get("aggregation") or {}).get("rule", "relevant")
    slots = ":slots" if (shipped_verifier_dir() / COMBINER_FILE).is_file() else ""
    stack = {"model": EMBEDDED_NAME, "faithfulness": f"verifier:{card['name']}:{rule}{slots}", "uq_faith": "se_probe",
             "uq_unfaith": "se_probe_closed", "prompt_version": "rag-v1", "mode": "probe"}
    path = default_calibrator_path(stack)
    assert path is not None and path.name == PROBE_NAME
    obj = json.loads(path.read_text(encoding="utf-8"))
    assert obj["variant"] == "soft" and "distractor pairs" in obj["description"]
