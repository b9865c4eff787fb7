"""The artefact loaders on hostile files: calibrators, probes, configs, faithfulness maps,
policies and single-example .json inputs. Lists or strings where numbers belong, NaN,
1e999, nesting 100,000 deep, integers too large for C, devices and huge files: each one
line naming the file and field, read within franq's limits (a device or an oversized file
is refused without being read), never a traceback or a MemoryError."""
from __future__ import annotations

import copy
import json
import os
from importlib import resources

import pytest
from click.testing import CliRunner

from calibration.base import CalibratorFileError, read_json
from franq.apps.answering.policy import load_policy
from franq.calibrate import load_calibrator
from franq.cli import main
from franq.config import FranqConfig
from franq.errors import InputError
from franq.faithfulness.logistic import LogisticMap
from franq.internals.probe_file import ProbeFile

DATA = resources.files("franq").joinpath("data")
CAL = json.loads(DATA.joinpath("calibrator-long-embedded-SmolLM2-135M-Instruct.Q4-1-combined-v1.json").read_text())
PROBE = {"format": "franq-probe-v1", "model": "m", "probes": [
    {"target": "is_faithful", "features": {"kind": "lookback"}, "mean": [0.0, 1.0], "scale": [1.0, 2.0],
     "coef": [0.5, -0.5], "intercept": 0.1}]}
DEEP = "[" * 100_000 + "]" * 100_000


def _cal(**changes):
    obj = copy.deepcopy(CAL)
    for dotted, value in changes.items():
        *path, key = dotted.split(".")
        target = obj
        for p in path:
            target = target[p]
        target[key] = value
    return obj


CALIBRATORS = {
    "faithful_threshold list": (_cal(faithful_threshold=[0.5]), "'faithful_threshold' must be"),
    "faithful_threshold string": (_cal(faithful_threshold="x"), "'faithful_threshold' must be"),
    "n_samples list": (_cal(n_samples=[1]), "'n_samples' must be a whole number"),
    "n_samples string": (_cal(n_samples="abc"), "'n_samples'"),
    "n_samples fraction": (_cal(n_samples=1.5), "'n_samples'"),
    "description list": (_cal(description=[1]), "'description'"),
    "counts list": (_cal(counts=[1]), "'counts'"),
    "fitted_for list": (_cal(fitted_for=[1]), "'fitted_for'"),
    "uq_faith list": (_cal(uq_faith=[1, 2]), "'uq_faith'"),
    "x strings": (_cal(**{"uq_faith.x": ["a"] * 10}), "'x' must be a list of finite numbers"),
    "x a string": (_cal(**{"uq_faith.x": "abc"}), "'x'"),
    "y above 1": (_cal(**{"uq_faith.y": [2.0] * 10}), "'y'"),
    "y_min list": (_cal(**{"uq_faith.y_min": [0]}), "'y_min'"),
    "y_min string": (_cal(**{"uq_faith.y_min": "a"}), "'y_min'"),
    "y_max below y_min": (_cal(**{"uq_faith.y_min": 0.9, "uq_faith.y_max": 0.1}), "'y_max'"),
    "iso n_samples string": (_cal(**{"uq_faith.n_samples": "zz"}), "'n_samples'"),
    "weight_sum list": (_cal(**{"uq_faith.weight_sum": [1]}), "'weight_sum'"),
    "version list": (_cal(version=[1]), "'version'"),
    "format list": (_cal(format=[1]), "'format'"),
    "top level list": ([1, 2], "JSON object"),
}


@pytest.mark.parametrize("name", CALIBRATORS)
def test_calibrator_fields(tmp_path, name):
    obj, words = CALIBRATORS[name]
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(obj))
    with pytest.raises(CalibratorFileError, match="cal.json") as exc:
        load_calibrator(path)
    assert words in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("text, words", [
    (json.dumps(CAL).replace('"y_max": 1.0', '"y_max": 1e999', 1), "out of range"),
    (json.dumps(CAL)[:-1] + ', "counts": ' + DEEP + "}", "nested too deeply"),
    (json.dumps(CAL)[:-1] + ', "counts": ' + "[" * 70 + "]" * 70 + "}", "nested too deeply"),
    (json.dumps(CAL).replace("0.5", "NaN", 1), "NaN"),
    ('{"a": "\\ud800"', "not valid JSON"),
])
def test_calibrator_text(tmp_path, text, words):
    path = tmp_path / "cal.json"
    path.write_text(text)
    with pytest.raises(CalibratorFileError, match=words):
        load_calibrator(path)


def test_calibrator_devices_and_size(tmp_path):
    for path in ("/dev/zero", str(tmp_path)):
        with pytest.raises(CalibratorFileError, match="not a regular file"):
            read_json(path)
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(200 * 2**20)  # 200 MB, sparse: refused by its size, never read
    with pytest.raises(CalibratorFileError, match="over the limit"):
        read_json(big)
    (tmp_path / "small.json").write_text(json.dumps(CAL))
    with pytest.raises(CalibratorFileError, match="over the limit of 100"):
        read_json(tmp_path / "small.json", max_bytes=100)


def _probe(**changes):
    obj = copy.deepcopy(PROBE)
    obj["probes"][0].update(changes)
    return obj


PROBES = {
    "NaN intercept": (json.dumps(_probe()).replace('"intercept": 0.1', '"intercept": NaN'), "NaN"),
    "string intercept": (json.dumps(_probe(intercept="0.1")), "intercept must be a finite number"),
    "list intercept": (json.dumps(_probe(intercept=[0.1])), "intercept"),
    "short mean": (json.dumps(_probe(mean=[0.0])), "mean has 1 values"),
    "non-numeric mean": (json.dumps(_probe(mean=["a", "b"])), "mean must be a list of finite numbers"),
    "mean a string": (json.dumps(_probe(mean="ab")), "mean must be a list"),
    "zero scale": (json.dumps(_probe(scale=[0.0, 1.0])), "scale"),
    "no coef": (json.dumps({**PROBE, "probes": [{k: v for k, v in PROBE["probes"][0].items() if k != "coef"}]}),
                "has no ['coef']"),
    "probe a list": (json.dumps({**PROBE, "probes": [[1]]}), "must be an object"),
    "probes a dict": (json.dumps({**PROBE, "probes": {"a": 1}}), "'probes' must be a list"),
    "features a list": (json.dumps(_probe(features=[1])), "features"),
    "features kind a list": (json.dumps(_probe(features={"kind": ["x"]})), "features"),
    "target unknown": (json.dumps(_probe(target="x")), "target"),
    "model a list": (json.dumps({**PROBE, "model": [1]}), "'model'"),
    "deep nesting": (json.dumps(PROBE)[:-1] + ', "x": ' + DEEP + "}", "nested too deeply"),
    "1e999 coef": (json.dumps(_probe()).replace("0.5", "1e999", 1), "out of range"),
}


@pytest.mark.parametrize("name", PROBES)
def test_probe_files(tmp_path, name):
    text, words = PROBES[name]
    path = tmp_path / "probe.json"
    path.write_text(text)
    with pytest.raises(InputError, match="probe.json") as exc:
        ProbeFile.load(path)
    assert words in str(exc.value), str(exc.value)


def test_probe_devices_and_huge_files(tmp_path):
    with pytest.raises(InputError, match="device"):
        ProbeFile.load("/dev/zero")
    for name in ("huge.json", "huge.safetensors"):
        with open(tmp_path / name, "wb") as f:
            f.truncate(200 * 2**20)
        with pytest.raises(InputError, match="over the limit"):
            ProbeFile.load(tmp_path / name)
    (tmp_path / "ok.json").write_text(json.dumps(PROBE))
    assert ProbeFile.load(tmp_path / "ok.json").probes[0].intercept == 0.1


@pytest.mark.parametrize("name, text, words", [
    ("deep.toml", "a = " + DEEP + "\n", "nested too deeply"),
    ("deep.json", '{"mode": ' + DEEP + "}", "nested too deeply"),
    ("deep_tables.toml", "x = " + "{a = " * 200 + "1" + "}" * 200 + "\n", "nested too deeply"),
    ("big.toml", "[model]\nthreads = 99999999999999999999999\n", "'model.threads' holds the integer"),
    ("big.json", '{"model": {"threads": 99999999999999999999999}}', "'model.threads' holds the integer"),
    ("neg.toml", "[uq]\nn_samples = -9999999999999999999999\n", "'uq.n_samples'"),
    ("inf.json", '{"model": {"threads": 1e999}}', "out of range"),
    ("nan.json", '{"model": {"threads": NaN}}', "NaN"),
    ("utf8.toml", b"mode = \"caf\xe9\"\n", "not valid UTF-8"),
    ("broken.toml", "mode = \n", "not valid TOML"),
])
def test_config_files(tmp_path, name, text, words):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(InputError, match=f"config {path}") as exc:
        FranqConfig.from_file(path)
    assert words in str(exc.value) and "\n" not in str(exc.value), str(exc.value)


def test_config_devices_and_size_through_the_cli(tmp_path):
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * 2**20 + "\n")
    for path, words in (("/dev/zero", "device or special file"), (big, "over the limit of 1048576")):
        res = CliRunner().invoke(main, ["score", "--example", "--config", str(path)])
        assert res.exit_code == 1 and words in res.output and "Traceback" not in res.output, res.output


@pytest.mark.parametrize("data, words", [
    ({"features": ["a"], "coef": ["x"], "intercept": 0}, "'coef' must be a list of numbers"),
    ({"features": "a", "coef": [1], "intercept": 0}, "'features'"),
    ({"features": ["a"], "coef": [1], "intercept": "0"}, "'intercept'"),
    ({"features": ["a"], "coef": [1], "intercept": 0, "mean": [[1]]}, "'mean'"),
    ({"features": ["a"], "coef": [1], "intercept": 0, "stack": [1]}, "'stack'"),
    ({"features": ["a"], "coef": [1, 2], "intercept": 0}, "expected 1 values"),
])
def test_faithfulness_maps(tmp_path, data, words):
    path = tmp_path / "map.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=words):
        LogisticMap.from_json(path)


def test_faithfulness_map_devices_and_depth(tmp_path):
    with pytest.raises(InputError, match="device"):
        LogisticMap.from_json("/dev/zero")
    (tmp_path / "deep.json").write_text('{"features": ' + DEEP + "}")
    with pytest.raises(InputError, match="nested too deeply"):
        LogisticMap.from_json(tmp_path / "deep.json")


POLICY = {"kind": "franq.selective-policy", "version": 1, "features": ["a", "b"], "coef": [1.0, 2.0],
          "intercept": 0.0, "mean": [0, 0], "scale": [1, 1], "threshold": 0.5, "coverage": 0.8}


@pytest.mark.parametrize("changes, words", [
    ({"coef": ["x", 1]}, "'coef' must be a list of 2 finite numbers"),
    ({"coef": [1.0]}, "'coef'"),
    ({"features": 5}, "'features'"),
    ({"intercept": "0"}, "'intercept' must be a finite number"),
    ({"threshold": [0.5]}, "'threshold'"),
    ({"cv": [1]}, "'cv'"),
    ({"kind": "franq.threshold-policy", "verify": 5, "fallback": "abstain"}, "'verify' must be a string"),
    ({"kind": [1]}, "not a franq policy file"),
])
def test_policy_files(tmp_path, changes, words):
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({**POLICY, **changes}))
    with pytest.raises(InputError, match=words):
        load_policy(path)


def test_policy_devices_depth_and_nan(tmp_path):
    with pytest.raises(InputError, match="device"):
        load_policy("/dev/zero")
    (tmp_path / "p.json").write_text(json.dumps(POLICY).replace("0.5", "NaN"))
    with pytest.raises(InputError, match="NaN"):
        load_policy(tmp_path / "p.json")
    (tmp_path / "p.json").write_text(json.dumps(POLICY)[:-1] + ', "cv": ' + DEEP + "}")
    with pytest.raises(InputError, match="nested too deeply"):
        load_policy(tmp_path / "p.json")


def test_a_200_mb_json_input_is_refused_by_its_size_before_any_model(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(200 * 2**20)  # sparse: the check reads its size, not its bytes
    res = CliRunner().invoke(main, ["score", str(big)])
    assert res.exit_code == 1 and "209715200 bytes, over the limit of 67108864" in res.output, res.output
    res = CliRunner().invoke(main, ["score", "/dev/zero"])
    assert res.exit_code == 1 and "device" in res.output


@pytest.mark.parametrize("text, words", [
    ('{"question": ' + DEEP + "}", "nested too deeply"),
    ('{"question": "q", "passages": ["p"], "answer": "a", "meta": {"x": 1e999}}', "out of range"),
    (b'{"question": "caf\xe9"}', "line 1: not valid UTF-8"),
])
def test_hostile_single_json_inputs(tmp_path, text, words):
    path = tmp_path / "ex.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    res = CliRunner().invoke(main, ["score", str(path)])
    assert res.exit_code == 1 and words in res.output and "Traceback" not in res.output, res.output


def test_a_fifo_config_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "cfg.toml"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="device or special file"):
        FranqConfig.from_file(fifo)
