"""Linear probes on a model's internals: fitted per model, stored as JSON or safetensors,
never pickled.

A probe is a logistic regression from one claim-level feature set of the passes
(:mod:`franq.internals`: Lookback Lens ratios, or hidden states at chosen layers of the
with-passages pass, the closed-book pass or their difference) to one target:

    is_faithful            the claim is supported by the passages (faithfulness backends)
    is_true                the claim is true (the truth_probe scorer)
    low_semantic_entropy   the answer's semantic entropy over sampled answers is below the
                           threshold that best splits the fitting data in two (Kossen et al.,
                           2024: a semantic entropy probe; the se_probe scorers), from a
                           numeric ``semantic_entropy`` label

``franq fit probe`` fits them on labelled claims (:mod:`franq.fit.probe`) and writes a probe
file, JSON (``.json``)::

    {"format": "franq-probe-v1", "model": "<the LM's name>",
     "probes": [{"target": "is_faithful", "features": {"kind": "lookback"},
                 "mean": [...], "scale": [...], "coef": [...], "intercept": 0.1,
                 "fitted_on": {"data_sha256": "...", "n_claims": 2000, "positive_rate": 0.8},
                 "cv": {"folds": 5, "auroc": 0.7, "pr_auc": 0.9, "C": 0.1}}, ...]}

or safetensors (``.safetensors``): tensors ``probe.<k>.mean`` / ``.scale`` / ``.coef``
(float64) and the rest of the file above, without those arrays, as JSON in the header's
``franq_probe`` metadata. Both load the same.

A probe belongs to the model it was fitted with: loading it for another model is an error.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from franq import files
from franq.errors import InputError
from franq.internals import check_spec, spec_label

FORMAT = "franq-probe-v1"
TARGETS = ("is_faithful", "is_true", "low_semantic_entropy")
LABELS = {"is_faithful": "is_faithful", "is_true": "is_true", "low_semantic_entropy": "semantic_entropy"}
"""Probe target -> the claim label it is fitted from."""
C_GRID = (0.001, 0.01, 0.1, 1.0)
SAFETENSORS = ".safetensors"
ARRAYS = ("mean", "scale", "coef")


@dataclass(frozen=True)
class Probe:
    """``p = sigmoid(intercept + coef . (x - mean) / scale)`` on the ``features`` set."""

    target: str
    features: dict
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    fitted_on: dict = field(default_factory=dict)
    cv: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.target not in TARGETS:
            raise InputError(f"probe 'target': must be one of {list(TARGETS)}, got {self.target!r}")
        check_spec(self.features)
        if not len(self.mean) == len(self.scale) == len(self.coef):
            raise InputError("probe 'mean', 'scale', 'coef': must have one value per feature")

    def predict(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64).reshape(-1, len(self.coef))
        z = self.intercept + ((x - np.array(self.mean)) / np.array(self.scale)) @ np.array(self.coef)
        return 1.0 / (1.0 + np.exp(-z))

    @property
    def label(self) -> str:
        return spec_label(self.features)


@dataclass(frozen=True)
class ProbeFile:
    model: str
    probes: tuple[Probe, ...]

    def find(self, target: str, kind: str | tuple[str, ...], where: str = "probe file") -> Probe:
        """The first probe for ``target`` on a feature set of ``kind`` (one, or any of several)."""
        kinds = (kind,) if isinstance(kind, str) else tuple(kind)
        for p in self.probes:
            if p.target == target and p.features["kind"] in kinds:
                return p
        have = [f"{p.target}/{p.label}" for p in self.probes]
        raise InputError(f"{where}: no {' or '.join(kinds)} probe for {target}; it holds {have}")

    def check_model(self, lm_name: str | None, where: str = "probe file") -> None:
        if lm_name is not None and self.model != lm_name:
            raise InputError(f"{where}: fitted for model {self.model!r}, not {lm_name!r}; a probe reads one "
                             f"model's internals: fit one for this model with `franq fit probe`")

    def save(self, path: str | Path) -> None:
        """Write as safetensors when ``path`` ends in ``.safetensors``, else as JSON."""
        (self.to_safetensors if str(path).endswith(SAFETENSORS) else self.to_json)(path)

    @classmethod
    def load(cls, path: str | Path) -> ProbeFile:
        return (cls.from_safetensors if str(path).endswith(SAFETENSORS) else cls.from_json)(path)

    def to_json(self, path: str | Path) -> None:
        data = {"format": FORMAT, "model": self.model, "probes": [asdict(p) for p in self.probes]}
        files.atomic_write(str(path), json.dumps(data, indent=1) + "\n")

    def to_safetensors(self, path: str | Path) -> None:
        from safetensors.numpy import save

        tensors, header = {}, []
        for k, p in enumerate(self.probes):
            d = asdict(p)
            for key in ARRAYS:
                tensors[f"probe.{k}.{key}"] = np.asarray(d.pop(key), dtype=np.float64)
            header.append(d)
        meta = {"format": FORMAT, "model": self.model, "probes": header}
        with files.atomic_open(str(path), "wb") as f:  # written whole, then renamed over the output
            f.write(save(tensors, metadata={"franq_probe": json.dumps(meta)}))

    @classmethod
    def from_safetensors(cls, path: str | Path) -> ProbeFile:
        from safetensors import SafetensorError, safe_open

        files.check_file(path, what="probe file")
        try:
            with safe_open(str(path), framework="numpy") as f:
                meta = (f.metadata() or {}).get("franq_probe")
                if meta is None:
                    raise InputError(f"probe file {path}: a safetensors file without 'franq_probe' metadata "
                                     f"(not written by `franq fit probe`)")
                data = files.load_json(meta, f"probe file {path}: 'franq_probe' metadata")
                for k, p in enumerate(data.get("probes", []) if isinstance(data, dict) else []):
                    for key in ARRAYS:
                        name = f"probe.{k}.{key}"
                        if name not in f.keys():
                            raise InputError(f"probe file {path}: tensor {name!r} is missing")
                        p[key] = f.get_tensor(name).tolist()
        except OSError as exc:
            raise InputError(f"probe file: cannot read {path}: {exc.strerror or exc}") from None
        except (SafetensorError, ValueError) as exc:
            raise InputError(f"probe file {path}: not a valid safetensors probe file: {exc}") from None
        return cls._from_data(data, path)

    @classmethod
    def from_json(cls, path: str | Path) -> ProbeFile:
        return cls._from_data(files.read_json_file(path, what="probe file"), path)

    @classmethod
    def _from_data(cls, data, path) -> ProbeFile:
        where = f"probe file {path}"
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError(f"{where}: 'format' must be {FORMAT!r}")
        if not isinstance(data.get("probes"), list):
            raise InputError(f"{where}: 'probes' must be a list of probes")
        model = data.get("model", "")
        if not isinstance(model, str):
            raise InputError(f"{where}: 'model' must be a string, got {type(model).__name__}")
        return cls(model, tuple(_probe(p, f"{where}: 'probes[{k}]'") for k, p in enumerate(data["probes"])))


def _numbers(p: dict, key: str, where: str, n: int | None = None) -> tuple[float, ...]:
    v = p.get(key)
    if not isinstance(v, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                          and math.isfinite(x) for x in v):
        raise InputError(f"{where}.{key} must be a list of finite numbers")
    if n is not None and len(v) != n:
        raise InputError(f"{where}.{key} has {len(v)} values, 'coef' has {n} (one per feature)")
    return tuple(float(x) for x in v)


def _probe(p, where: str) -> Probe:
    """One probe of a probe file, every field checked (the file is read, never trusted)."""
    if not isinstance(p, dict):
        raise InputError(f"{where} must be an object, got {type(p).__name__}")
    missing = [k for k in ("target", "features", "mean", "scale", "coef", "intercept") if k not in p]
    if missing:
        raise InputError(f"{where} has no {missing}; each probe needs target, features, mean, scale, coef, intercept")
    coef = _numbers(p, "coef", where)
    mean, scale = _numbers(p, "mean", where, len(coef)), _numbers(p, "scale", where, len(coef))
    if any(x == 0 for x in scale):
        raise InputError(f"{where}.scale must hold no zero (it divides the features)")
    intercept = p["intercept"]
    if isinstance(intercept, bool) or not isinstance(intercept, (int, float)) or not math.isfinite(intercept):
        raise InputError(f"{where}.intercept must be a finite number, got {intercept!r:.40}")
    if not isinstance(p["features"], dict):
        raise InputError(f"{where}.features must be an object, got {type(p['features']).__name__}")
    for key in ("fitted_on", "cv"):
        if not isinstance(p.get(key, {}), dict):
            raise InputError(f"{where}.{key} must be an object")
    try:
        return Probe(p["target"], p["features"], mean, scale, coef, float(intercept), p.get("fitted_on", {}),
                     p.get("cv", {}))
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}: {exc}") from None


def packaged_probe_path(lm_name: str) -> Path:
    """The probe file shipped for the embedded model (``franq/data/probe-<model>.json``)."""
    slug = lm_name.split(":", 1)[-1]
    return Path(str(resources.files("franq").joinpath(f"data/probe-{slug}.json")))


def load_probes(path: str | Path | None, lm_name: str | None, where: str) -> ProbeFile:
    """The probe file at ``path``, or the packaged one for ``lm_name``; checked for the model."""
    if path is None:
        if lm_name is None or not packaged_probe_path(lm_name).is_file():
            raise InputError(f"{where}: no probe file is shipped for model {lm_name!r}; fit one with "
                             f"`franq fit probe labelled.jsonl -o probe.json` and pass it")
        path = packaged_probe_path(lm_name)
    probes = ProbeFile.load(path)
    probes.check_model(lm_name, where)
    return probes


def data_hash(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
