"""Loading: one device resolution for every model franq loads."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from franq.errors import InputError
from franq.lm.load import resolve_device, resolve_dtype


def test_resolve_device_defaults_to_cuda_when_available_else_cpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device(None) == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert resolve_device(None) == torch.device("cuda")
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(torch.device("cuda", 1)) == torch.device("cuda:1")


def test_an_unknown_device_names_the_setting():
    with pytest.raises(InputError, match="device: expected a torch device.*got 'gpu0'"):
        resolve_device("gpu0")


def test_auto_dtype_is_float32_on_cpu_and_bfloat16_elsewhere():
    assert resolve_dtype(None, torch.device("cpu")) is torch.float32
    assert resolve_dtype("auto", torch.device("cuda")) is torch.bfloat16
    assert resolve_dtype("float16", torch.device("cpu")) is torch.float16
    with pytest.raises(InputError, match="dtype: expected"):
        resolve_dtype("int8", torch.device("cpu"))


def test_devices_are_resolved_in_one_place():
    root = Path(__file__).resolve().parents[1] / "franq"
    callers = sorted(str(p.relative_to(root)) for p in root.rglob("*.py") if "cuda.is_available" in p.read_text())
    assert callers == ["lm/load.py"]


def test_the_tiny_model_loads_on_the_resolved_device(tiny_lm_path, monkeypatch):
    from franq.lm import CausalLM

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    lm = CausalLM.load(str(tiny_lm_path))
    assert lm.device == torch.device("cpu") and next(lm.model.parameters()).dtype is torch.float32
