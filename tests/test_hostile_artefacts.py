"""Hostile artefacts (issue 47.4): a verifier folder with missing or non-finite tensors, a
broken or oversized ``card.json``, ``artefact_bytes`` raised and lowered as its message says,
a decreasing isotonic map that claims to increase, a probe naming a layer the model lacks,
strings in ``fit_spread``. Each ends in one line naming the file and field, never random
weights, a traceback or a silent wrong score."""
from __future__ import annotations

import copy
import json
import shutil
from importlib import resources

import numpy as np
import pytest

from calibration.base import CalibratorFileError
from calibration.isotonic import FORMAT as ISO_FORMAT
from calibration.isotonic import VERSION as ISO_VERSION
from calibration.isotonic import IsotonicCalibrator
from conftest import run_cli, tiny_cli_args
from franq import limits as franq_limits
from franq.calibrate import load_calibrator
from franq.cli.options import config_from_flags
from franq.errors import InputError
from franq.internals.probe_file import ProbeFile
from franq.lm.capture import CaptureSpec
from franq.verifier import Verifier
from franq.verifier.model import read_card

DATA = resources.files("franq").joinpath("data")
CAL = json.loads(DATA.joinpath("calibrator-long-embedded-SmolLM2-135M-Instruct.Q4-1-combined-v1.json").read_text())
PROBE = {"format": "franq-probe-v1", "model": "m", "probes": [
    {"target": "is_faithful", "features": {"kind": "lookback"}, "mean": [0.0, 1.0], "scale": [1.0, 2.0],
     "coef": [0.5, -0.5], "intercept": 0.1}]}


@pytest.fixture(autouse=True)
def _default_limits():
    getattr(franq_limits, "use_limits", lambda _: None)(None)  # (absent before 0.3.0)
    yield
    getattr(franq_limits, "use_limits", lambda _: None)(None)  # (absent before 0.3.0)


def _copy(verifier_dir, tmp_path):
    return shutil.copytree(verifier_dir, tmp_path / "v")


def _edit_weights(directory, change):
    from safetensors.torch import load_file, save_file

    tensors = load_file(directory / "model.safetensors")
    change(tensors)
    save_file(tensors, directory / "model.safetensors", metadata={"format": "pt"})


def _card(directory, **changes):
    card = json.loads((directory / "card.json").read_text())
    card.update(changes)
    (directory / "card.json").write_text(json.dumps(card))


# ---------------------------------------------------------------------- the verifier folder
@pytest.mark.parametrize("name", ["classifier.weight", "bert.encoder.layer.1.attention.self.query.weight"])
def test_a_missing_tensor_is_refused_not_filled_with_random_weights(verifier_dir, tmp_path, name):
    d = _copy(verifier_dir, tmp_path)
    _edit_weights(d, lambda t: t.pop(name))
    with pytest.raises(InputError) as exc:
        Verifier(d)
    msg = str(exc.value)
    assert "\n" not in msg and "model.safetensors" in msg and name in msg


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_weights_are_refused(verifier_dir, tmp_path, value):
    d = _copy(verifier_dir, tmp_path)
    _edit_weights(d, lambda t: t["classifier.bias"].fill_(value))
    with pytest.raises(InputError, match="'classifier.bias' holds NaN or infinite"):
        Verifier(d)


def test_the_intact_folder_still_loads_and_scores(verifier_dir):
    p = Verifier(verifier_dir).predict([("The tower is in Paris.", "The tower is in Paris.")])
    assert p.shape == (1, 3) and np.isfinite(p).all()


@pytest.mark.parametrize("text, words", [
    ("{not json", "not valid JSON"),
    ('{"format": "franq-verifier", "version": 1, "max_length": NaN}', "NaN"),
    ("[1, 2]", "expected 'format'"),
    ('"card"', "expected 'format'"),
    ("[" * 5000 + "]" * 5000, "nested too deeply"),
])
def test_a_broken_card_is_one_line(verifier_dir, tmp_path, text, words):
    d = _copy(verifier_dir, tmp_path)
    (d / "card.json").write_text(text)
    with pytest.raises(InputError) as exc:
        Verifier(d)
    assert words in str(exc.value) and "card.json" in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("field, value", [
    ("max_length", 1), ("max_length", 0), ("max_length", 10**9), ("max_length", "512"), ("max_length", 64.5),
    ("window_words", -5), ("window_words", 0), ("window_words", True), ("window_overlap_sentences", -1),
])
def test_card_numbers_out_of_range_are_refused(verifier_dir, tmp_path, field, value):
    d = _copy(verifier_dir, tmp_path)
    _card(d, **{field: value})
    with pytest.raises(InputError, match=f"'{field}' must be a whole number from"):
        read_card(d)


@pytest.mark.parametrize("window_words", [-5, 0])
def test_a_negative_window_words_setting_is_refused(verifier_dir, window_words):
    with pytest.raises(InputError, match="window_words must be a whole number"):
        Verifier(verifier_dir, window_words=window_words)


def test_a_huge_card_is_refused_by_its_size_before_reading(verifier_dir, tmp_path):
    d = _copy(verifier_dir, tmp_path)
    with open(d / "card.json", "r+b") as f:
        f.truncate(200 * 2**20)  # sparse: 200 MB that are never read
    with pytest.raises(InputError, match="over the limit of .*raise it with \\[limits\\] artefact_bytes"):
        read_card(d)


# ---------------------------------------------------------------------- artefact_bytes raisable
def _probe_config(tmp_path, limits: str = ""):
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps(PROBE))
    config = tmp_path / "c.toml"
    config.write_text(f'[model]\nprobe_file = "{probe}"\n{limits}')
    return probe, config


def test_artefact_bytes_in_the_config_and_on_the_command_line_are_obeyed(tmp_path):
    probe, config = _probe_config(tmp_path, "[limits]\nartefact_bytes = 50\n")
    config_from_flags(str(config))
    with pytest.raises(InputError, match="over the limit of 50"):
        ProbeFile.load(probe)
    config_from_flags(str(config), limits=(("artefact_bytes", 10_000),))  # --limit over [limits]
    assert ProbeFile.load(probe).probes[0].intercept == 0.1
    config_from_flags(None, limits=(("artefact_bytes", 60),))
    with pytest.raises(CalibratorFileError, match="over the limit of 60"):
        load_calibrator(DATA.joinpath("calibrator-long-embedded-SmolLM2-135M-Instruct.Q4-1-combined-v1.json"))


@pytest.mark.parametrize("how", ["--limit", "[limits]"])
def test_artefact_bytes_through_the_command(tmp_path, tiny_lm_path, how):
    _, config = _probe_config(tmp_path, "[limits]\nartefact_bytes = 50\n" if how == "[limits]" else "")
    extra = ["--limit", "artefact_bytes=50"] if how == "--limit" else []
    r = run_cli("score", "--example", "--config", config, *tiny_cli_args(tiny_lm_path), *extra)
    assert r.exit_code != 0 and "over the limit of 50" in r.output and "Traceback" not in r.output


# ---------------------------------------------------------------------- calibrators and probes
def test_a_decreasing_map_that_says_increasing_is_refused():
    good = {"format": ISO_FORMAT, "version": ISO_VERSION, "increasing": True, "x": [0.0, 0.5, 1.0],
            "y": [0.1, 0.5, 0.9]}
    IsotonicCalibrator.from_dict(good)
    with pytest.raises(CalibratorFileError, match="'y' must be non-decreasing"):
        IsotonicCalibrator.from_dict({**good, "y": [0.9, 0.5, 0.1]})
    with pytest.raises(CalibratorFileError, match="'y' must be non-increasing"):
        IsotonicCalibrator.from_dict({**good, "increasing": False})
    IsotonicCalibrator.from_dict({**good, "increasing": False, "y": [0.9, 0.5, 0.1]})


def test_a_shipped_calibrator_file_with_a_decreasing_map_is_refused(tmp_path):
    obj = copy.deepcopy(CAL)
    obj["uq_faith"]["y"] = sorted(obj["uq_faith"]["y"], reverse=True)
    if obj["uq_faith"]["y"] == sorted(obj["uq_faith"]["y"]):
        pytest.skip("the shipped map is flat")
    (tmp_path / "c.json").write_text(json.dumps(obj))
    with pytest.raises(CalibratorFileError, match="non-decreasing"):
        load_calibrator(tmp_path / "c.json")


@pytest.mark.parametrize("layers", [(999,), (2,), (-3,), (0, 999)])
def test_a_probe_layer_the_model_lacks_is_refused(tiny_lm, layers):
    items = [(tiny_lm.encode("Where is it?"), tiny_lm.encode("In Paris."))]
    with pytest.raises(InputError, match=f"layer {[x for x in layers if not -2 <= x < 2][0]} does not exist; "
                                         "the model has 2 decoder layers"):
        tiny_lm.captured_logprobs(items, CaptureSpec(attention=False, hidden_layers=layers))
    _, (ti,) = tiny_lm.captured_logprobs(items, CaptureSpec(attention=False, hidden_layers=(1, -1)))
    assert sorted(ti.hidden) == [-1, 1]


@pytest.mark.parametrize("spread, words", [
    ({"distinct": "3", "min": 0.1, "max": 0.9}, "'distinct'"),
    ({"distinct": 3, "min": "low", "max": 0.9}, "'min'"),
    ({"distinct": 3, "min": 0.1, "max": [0.9]}, "'max'"),
    ({"distinct": 3, "min": 0.9, "max": 0.1}, "'max'"),
    ({"distinct": -1, "min": 0.1, "max": 0.9}, "'distinct'"),
])
def test_strings_in_fit_spread_are_one_line(tmp_path, spread, words):
    (tmp_path / "c.json").write_text(json.dumps({**CAL, "fit_spread": spread}))
    with pytest.raises(CalibratorFileError) as exc:
        load_calibrator(tmp_path / "c.json")
    assert words in str(exc.value) and "fit_spread" in str(exc.value)
