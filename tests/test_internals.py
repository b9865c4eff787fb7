"""Capture of attention and hidden-state signals in the teacher-forced passes
(franq/lm/capture.py), the probes fitted on them and the backends that read them."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from conftest import assert_float32_close
from franq.cli import main
from franq.errors import InputError
from franq.internals import claim_features
from franq.lm.capture import CaptureSpec
from franq.internals.probe_file import ProbeFile
from franq.fit.probe import fit_probe, parse_feature_specs

SPEC = CaptureSpec(attention=True, hidden_layers=(0, 1))


def _items(lm):
    """Prompts and answers of different lengths, so batches are left-padded."""
    texts = [("Where is the Eiffel Tower? Passages: Paris, France.", "The tower is in Paris, France."),
             ("Who designed it?", "Gustave Eiffel, a French civil engineer who designed bridges."),
             ("What is the capital?", "Paris.")]
    return [(lm.encode(p), lm.encode(a)) for p, a in texts]


def test_capture_keeps_the_log_probabilities_exactly(tiny_lm):
    items = _items(tiny_lm)
    before = tiny_lm.continuation_logprobs(items)
    got, internals = tiny_lm.captured_logprobs(items, SPEC)
    after = tiny_lm.continuation_logprobs(items)  # the wrapper stays installed, a no-op
    for b, g, a, (_, ans), ti in zip(before, got, after, items, internals):
        assert np.array_equal(b, g) and np.array_equal(b, a)
        assert ti.lookback.shape == ti.prev_attn.shape == (len(ans), 2, 4)
        assert sorted(ti.hidden) == [0, 1] and ti.hidden[0].shape == (len(ans), 32)


def _reference(lm, prompt, answer):
    """Full attention maps and hidden states of one unpadded sequence (eager attention)."""
    ids = torch.tensor([list(prompt) + list(answer)])
    impl = lm.model.config._attn_implementation
    lm.model.config._attn_implementation = "eager"
    try:
        with torch.inference_mode():
            out = lm.model(input_ids=ids, output_attentions=True, output_hidden_states=True)
    finally:
        lm.model.config._attn_implementation = impl
    return [a[0].double().numpy() for a in out.attentions], [h[0].numpy() for h in out.hidden_states]


def test_captured_ratios_and_states_match_full_attention_maps(tiny_lm):
    items = _items(tiny_lm)
    _, internals = tiny_lm.captured_logprobs(items, SPEC, max_batch_tokens=4096)  # one padded batch
    for (prompt, answer), ti in zip(items, internals):
        att, hidden = _reference(tiny_lm, prompt, answer)
        p, n = len(prompt), len(answer)
        for layer, a in enumerate(att):  # a: (heads, seq, seq)
            for t in range(n):
                q = p - 1 + t  # the position that predicts answer token t
                ctx = a[:, q, :p].mean(-1)
                new = a[:, q, p:q + 1].mean(-1) if t else np.zeros(a.shape[0])
                assert_float32_close(ti.lookback[t, layer], ctx / (ctx + new))
                assert_float32_close(ti.prev_attn[t, layer], a[:, p + t, p + t - 1])
        assert_float32_close(ti.hidden[0], hidden[1][p:])  # [-1] is after the final norm


def test_capture_never_holds_a_full_attention_map(tiny_lm, monkeypatch):
    """Long inputs: the recomputed attention comes in blocks of QUERY_CHUNK answer rows."""
    from franq.lm import capture

    shapes = []
    real = torch.Tensor.softmax

    def spy(self, *a, **k):
        shapes.append(tuple(self.shape))
        return real(self, *a, **k)

    monkeypatch.setattr(capture, "QUERY_CHUNK", 4)
    monkeypatch.setattr(torch.Tensor, "softmax", spy)
    prompt, answer = _items(tiny_lm)[1]
    _, (ti,) = tiny_lm.captured_logprobs([(prompt, answer)], CaptureSpec(attention=True))
    assert shapes and max(s[1] for s in shapes) <= 4  # (heads, rows <= chunk, keys)
    assert ti.lookback.shape[0] == len(answer) and not ti.hidden


def _probe_data(n=60, d=5, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    y = (x[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    return x, y, [f"a{i // 3}" for i in range(n)]


def test_probe_fit_records_cv_and_round_trips_as_json(tmp_path):
    x, y, groups = _probe_data()
    probe = fit_probe(x, y, groups, target="is_faithful", features={"kind": "lookback"},
                      fitted_on={"data_sha256": "abc"})
    assert probe.cv["auroc"] > 0.8 and probe.cv["folds"] == 5 and probe.fitted_on["n_claims"] == 60
    path = tmp_path / "probe.json"
    ProbeFile("m", (probe,)).to_json(path)
    loaded = ProbeFile.from_json(path)
    np.testing.assert_allclose(loaded.probes[0].predict(x), probe.predict(x))
    with pytest.raises(InputError, match="fitted for model 'm', not 'other'"):
        loaded.check_model("other")
    with pytest.raises(InputError, match="no hidden probe for is_faithful"):
        loaded.find("is_faithful", "hidden")


def test_probe_needs_both_labels_and_valid_feature_specs():
    x, y, groups = _probe_data()
    with pytest.raises(InputError, match="at least 5 claims of each label"):
        fit_probe(x, np.ones_like(y), groups, target="is_true", features={"kind": "lookback"}, fitted_on={})
    assert parse_feature_specs("lookback, hidden:1+0") == [{"kind": "lookback"}, {"kind": "hidden", "layers": [1, 0]}]
    with pytest.raises(InputError, match="features.kind"):
        parse_feature_specs("attention")
    with pytest.raises(InputError, match="layers are integers"):
        parse_feature_specs("hidden:last")


PASSAGE = "The Eiffel Tower is in Paris, France. It was built from 1887 to 1889 by Gustave Eiffel."
FACTS = [("Where is the tower?", "The tower is in Paris.", True), ("When was it built?", "It was built in 1950.", False),
         ("Who built it?", "Gustave Eiffel built it.", True), ("Where is it?", "It is in Lyon, Italy.", False)]


@pytest.fixture(scope="module")
def fitted_probe(tiny_lm_path, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("probe")
    data = tmp / "labelled.jsonl"
    with open(data, "w", encoding="utf-8") as f:
        for r in range(6):
            for i, (q, a, ok) in enumerate(FACTS):
                f.write(json.dumps({"id": f"{r}-{i}", "question": q, "passages": [PASSAGE], "answer": a,
                                    "claims": [{"text": a, "is_faithful": ok, "is_true": ok}]}) + "\n")
    out = tmp / "probe.json"
    res = CliRunner().invoke(main, ["fit", "probe", str(data), "-o", str(out), "--model", str(tiny_lm_path),
                                    "--device", "cpu", "--features", "lookback,hidden:1", "--folds", "3"])
    assert res.exit_code == 0, res.output
    return out, res.output


def test_fit_probe_cli_writes_probes_with_model_data_hash_and_cv(fitted_probe, tiny_lm_path):
    out, output = fitted_probe
    data = json.loads(out.read_text())
    assert data["format"] == "franq-probe-v1" and data["model"] == str(tiny_lm_path)
    got = {(p["target"], p["features"]["kind"]) for p in data["probes"]}
    assert got == {("is_faithful", "lookback"), ("is_faithful", "hidden"), ("is_true", "lookback"),
                   ("is_true", "hidden")}
    p = data["probes"][0]
    assert len(p["fitted_on"]["data_sha256"]) == 64 and p["fitted_on"]["n_claims"] == 24
    assert len(p["coef"]) == 2 * 4 and p["cv"]["folds"] == 3
    report = json.loads(out.with_suffix(".report.json").read_text())
    assert report["n_answers"] == 24 and "CV AUROC" in output


@pytest.mark.parametrize("backend", ["lookback", "hidden_probe"])
def test_probe_backends_score_from_the_pass(fitted_probe, tiny_lm, make_franq, backend):
    out, _ = fitted_probe
    fr = make_franq(tiny_lm, {"faithfulness": {"name": backend}, "model": {"probe_file": str(out)}})
    res = fr.score("Where is the tower?", [PASSAGE], "The tower is in Paris. It was built in 1950.")
    p = [c.p_faithful for c in res.claims if c.status == "scored"]
    assert len(p) == 2 and all(0 < v < 1 for v in p)
    # the same probabilities from the probe applied to the features the pipeline gathered
    ex = fr.claim_evidence([fr_example("Where is the tower?", "The tower is in Paris. It was built in 1950.")],
                           capture=fr.faithfulness.capture)[0]
    np.testing.assert_allclose(p, fr.faithfulness.probe.predict(claim_features(fr.faithfulness.probe.features, ex)))
    plain = make_franq(tiny_lm).score("Where is the tower?", [PASSAGE], "The tower is in Paris. It was built in 1950.")
    assert [c.uq_faith for c in res.claims] == [c.uq_faith for c in plain.claims]  # the pass is unchanged


def fr_example(question, answer):
    from franq.io import Example
    from franq.types import Passage

    return Example(question, (Passage(PASSAGE),), answer)


def test_probe_backend_refuses_another_models_probe_and_the_short_preset(fitted_probe, tiny_lm, make_franq, tmp_path):
    out, _ = fitted_probe
    other = json.loads(out.read_text())
    other["model"] = "another-model"
    path = tmp_path / "other.json"
    path.write_text(json.dumps(other))
    with pytest.raises(InputError, match="fitted for model 'another-model'"):
        make_franq(tiny_lm, {"faithfulness": {"name": "lookback"}, "model": {"probe_file": str(path)}})
    with pytest.raises(InputError, match="cannot run in the short preset"):
        make_franq(tiny_lm, {"mode": "short", "faithfulness": {"name": "lookback"}, "model": {"probe_file": str(out)}})


def test_rauq_follows_the_papers_recurrence_and_head_selection():
    from franq.scorers.rauq import middle_layers, token_confidences

    logp = np.log([0.5, 0.8, 0.4])
    prev = np.zeros((3, 1, 2))
    prev[1:, 0] = [[0.9, 0.1], [0.7, 0.3]]  # head 0 attends most to the previous token
    c = token_confidences(logp, prev, alpha=0.2)[:, 0]
    c1 = 0.2 * 0.8 + 0.8 * 0.9 * 0.5
    np.testing.assert_allclose(c, [0.5, c1, 0.2 * 0.4 + 0.8 * 0.7 * c1])
    assert middle_layers(30) == list(range(10, 20)) and middle_layers(2) == [0]


def test_rauq_and_truth_probe_score_in_the_long_preset(fitted_probe, tiny_lm, make_franq):
    out, _ = fitted_probe
    fr = make_franq(tiny_lm, {"model": {"probe_file": str(out)}, "uq": {"long": {"extra": ["rauq", "truth_probe"]}}})
    res = fr.score("Where is the tower?", [PASSAGE], "The tower is in Paris. It was built in 1950.")
    for c in res.scored:
        assert c.signals["rauq"] > 0 and 0 < c.signals["p_true_probe"] < 1


def test_a_generated_answer_keeps_its_own_logprobs_and_gets_internals(fitted_probe, tiny_lm, make_franq):
    out, _ = fitted_probe
    fr = make_franq(tiny_lm, {"faithfulness": {"name": "hidden_probe"}, "model": {"probe_file": str(out)}})
    res = fr.answer("Where is the tower?", [PASSAGE], max_new_tokens=12)
    assert all(0 < c.p_faithful < 1 for c in res.scored)


def test_capture_specs_of_the_components_are_merged(fitted_probe, tiny_lm, make_franq):
    out, _ = fitted_probe
    fr = make_franq(tiny_lm, {"faithfulness": {"name": "hidden_probe"}, "model": {"probe_file": str(out)},
                              "uq": {"long": {"extra": ["rauq"]}}})
    assert fr.preset("long").evidence.capture == CaptureSpec(attention=True, hidden_layers=(1,))
    assert make_franq(tiny_lm).preset("long").evidence.capture is None  # nothing reads internals: plain passes
