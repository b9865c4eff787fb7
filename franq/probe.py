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

``franq fit-probe`` fits them on labelled claims (:func:`fit_probe`) and writes a probe
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
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from franq.errors import InputError
from franq.internals import KINDS, check_spec, needs_closed, spec_label

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
                             f"model's internals: fit one for this model with `franq fit-probe`")

    def save(self, path: str | Path) -> None:
        """Write as safetensors when ``path`` ends in ``.safetensors``, else as JSON."""
        (self.to_safetensors if str(path).endswith(SAFETENSORS) else self.to_json)(path)

    @classmethod
    def load(cls, path: str | Path) -> ProbeFile:
        return (cls.from_safetensors if str(path).endswith(SAFETENSORS) else cls.from_json)(path)

    def to_json(self, path: str | Path) -> None:
        data = {"format": FORMAT, "model": self.model, "probes": [asdict(p) for p in self.probes]}
        Path(path).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")

    def to_safetensors(self, path: str | Path) -> None:
        from safetensors.numpy import save_file

        tensors, header = {}, []
        for k, p in enumerate(self.probes):
            d = asdict(p)
            for key in ARRAYS:
                tensors[f"probe.{k}.{key}"] = np.asarray(d.pop(key), dtype=np.float64)
            header.append(d)
        meta = {"format": FORMAT, "model": self.model, "probes": header}
        save_file(tensors, str(path), metadata={"franq_probe": json.dumps(meta)})

    @classmethod
    def from_safetensors(cls, path: str | Path) -> ProbeFile:
        from safetensors import SafetensorError, safe_open

        try:
            with safe_open(str(path), framework="numpy") as f:
                meta = (f.metadata() or {}).get("franq_probe")
                if meta is None:
                    raise InputError(f"probe file {path}: a safetensors file without 'franq_probe' metadata "
                                     f"(not written by `franq fit-probe`)")
                data = json.loads(meta)
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
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise InputError(f"probe file: cannot read {path}: {exc.strerror}") from None
        except ValueError as exc:
            raise InputError(f"probe file {path}: not valid JSON: {exc}") from None
        return cls._from_data(data, path)

    @classmethod
    def _from_data(cls, data, path) -> ProbeFile:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError(f"probe file {path}: 'format' must be {FORMAT!r}")
        try:
            probes = tuple(Probe(p["target"], p["features"], tuple(p["mean"]), tuple(p["scale"]),
                                 tuple(p["coef"]), float(p["intercept"]), p.get("fitted_on", {}), p.get("cv", {}))
                           for p in data["probes"])
        except (KeyError, TypeError) as exc:
            raise InputError(f"probe file {path}: each probe needs target, features, mean, scale, coef, "
                             f"intercept ({exc})") from None
        return cls(str(data.get("model", "")), probes)


def packaged_probe_path(lm_name: str) -> Path:
    """The probe file shipped for the embedded model (``franq/data/probe-<model>.json``)."""
    slug = lm_name.split(":", 1)[-1]
    return Path(str(resources.files("franq").joinpath(f"data/probe-{slug}.json")))


def load_probes(path: str | Path | None, lm_name: str | None, where: str) -> ProbeFile:
    """The probe file at ``path``, or the packaged one for ``lm_name``; checked for the model."""
    if path is None:
        if lm_name is None or not packaged_probe_path(lm_name).is_file():
            raise InputError(f"{where}: no probe file is shipped for model {lm_name!r}; fit one with "
                             f"`franq fit-probe labelled.jsonl -o probe.json` and pass it")
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


def cross_validate(x: np.ndarray, y: np.ndarray, groups, *, folds: int = 5, c_grid=C_GRID):
    """Out-of-fold probabilities for each C (folds grouped by answer), the best C by AUROC,
    and its metrics."""
    from sklearn.metrics import average_precision_score, roc_auc_score
    from sklearn.model_selection import GroupKFold

    folds = min(folds, len(set(groups)))
    best = None
    for c in c_grid:
        oof = np.zeros(len(y))
        for tr, te in GroupKFold(n_splits=folds).split(x, y, groups):
            oof[te] = _fit(x[tr], y[tr], c).predict(x[te])
        auroc = float(roc_auc_score(y, oof))
        if best is None or auroc > best[1]:
            best = (c, auroc, float(average_precision_score(y, oof)), oof)
    c, auroc, pr_auc, oof = best
    return {"folds": folds, "grouped_by": "answer", "C": c, "auroc": round(auroc, 4), "pr_auc": round(pr_auc, 4)}, oof


@dataclass
class _Fitted:
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float

    def predict(self, x):
        z = self.intercept + ((x - self.mean) / self.scale) @ self.coef
        return 1.0 / (1.0 + np.exp(-z))


def _fit(x, y, c) -> _Fitted:
    from sklearn.linear_model import LogisticRegression

    mean, scale = x.mean(0), x.std(0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=c, max_iter=2000).fit((x - mean) / scale, y)
    return _Fitted(mean, scale, model.coef_[0], float(model.intercept_[0]))


def fit_probe(x: np.ndarray, y: np.ndarray, groups, *, target: str, features: dict, fitted_on: dict,
              folds: int = 5, c_grid=C_GRID) -> Probe:
    """A probe fitted on all of ``x, y`` with the C chosen by grouped cross-validation,
    whose metrics it records in ``cv``."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y).astype(int)
    if len(set(y.tolist())) != 2 or min(np.bincount(y)) < folds:
        raise InputError(f"{target}: need at least {folds} claims of each label to fit a probe, "
                         f"got {int((y == 1).sum())} positive and {int((y == 0).sum())} negative")
    cv, _ = cross_validate(x, y, list(groups), folds=folds, c_grid=c_grid)
    f = _fit(x, y, cv["C"])
    info = dict(fitted_on, n_claims=len(y), positive_rate=round(float(y.mean()), 4))
    return Probe(target, dict(features), tuple(f.mean.tolist()), tuple(f.scale.tolist()),
                 tuple(f.coef.tolist()), f.intercept, info, cv)


def labelled_features(franq, examples, specs: list[dict], *, batch_size: int = 4, progress=None):
    """Per feature spec, the claim-level feature matrix of every labelled, scorable claim of
    ``examples`` (raw :class:`~franq.io.Example` objects with ``claim_labels``), with their
    labels (``{label: array with nan where unlabelled}``, labels as in :data:`LABELS`) and
    answer ids (the CV groups). The closed-book pass runs only when a spec reads it."""
    from franq.internals import capture_for, claim_features

    capture = None
    for s in specs:
        capture = capture_for(s).union(capture)
    closed_book = any(needs_closed(s) for s in specs)
    names = tuple(dict.fromkeys(LABELS.values()))
    rows: dict[int, list] = {k: [] for k in range(len(specs))}
    labels: dict[str, list] = {t: [] for t in names}
    groups: list[str] = []
    examples = list(examples)
    for start in range(0, len(examples), batch_size):
        chunk = examples[start:start + batch_size]
        for ex, evidence in zip(chunk, franq.claim_evidence(chunk, capture=capture, closed_book=closed_book)):
            keep = [(i, e) for i, e in enumerate(evidence) if e is not None and ex.claim_labels
                    and any(ex.claim_labels[i].get(t) is not None for t in names)]
            if not keep:
                continue
            for k, s in enumerate(specs):
                rows[k].append(claim_features(s, [e for _, e in keep]))
            for t in names:
                labels[t] += [np.nan if ex.claim_labels[i].get(t) is None else float(ex.claim_labels[i][t])
                              for i, _ in keep]
            groups += [ex.stable_id()] * len(keep)
        if progress is not None:
            progress(len(chunk))
    if not groups:
        raise InputError(f"no scorable claim with a label ({', '.join(names)}) in the input")
    x = [np.concatenate(rows[k]) for k in range(len(specs))]
    return x, {t: np.array(v) for t, v in labels.items()}, groups


def entropy_split(values) -> float:
    """The threshold that splits semantic entropies into a low and a high group with the
    least within-group squared deviation (Kossen et al., 2024, section 4): low < threshold."""
    v = np.sort(np.asarray(values, dtype=np.float64))
    cuts = np.unique(v)[1:]
    if not len(cuts):
        raise InputError("semantic_entropy: every labelled answer has the same value; nothing to split")

    def cost(t):
        lo, hi = v[v < t], v[v >= t]
        return ((lo - lo.mean()) ** 2).sum() + ((hi - hi.mean()) ** 2).sum()

    return float(min(cuts, key=cost))


def target_labels(target: str, labels: dict[str, np.ndarray]) -> tuple[np.ndarray, dict]:
    """The 0/1 (nan: unlabelled) labels of ``target``, and what to record about them."""
    raw = labels.get(LABELS[target])
    if raw is None:
        return np.array([]), {}
    if target != "low_semantic_entropy":
        return raw, {}
    have = ~np.isnan(raw)
    if not have.any():
        return raw, {}
    threshold = entropy_split(raw[have])
    y = np.where(have, (raw < threshold).astype(float), np.nan)
    return y, {"semantic_entropy_threshold": round(threshold, 6)}


def fit_probe_file(model: str, specs: list[dict], x: list[np.ndarray], labels: dict[str, np.ndarray], groups,
                   *, fitted_on: dict, folds: int = 5, targets=TARGETS) -> tuple[ProbeFile, list[str]]:
    """One probe per (target with enough labels, feature spec); the targets skipped, with why."""
    probes, skipped = [], []
    groups = np.asarray(groups)
    for target in targets:
        y_all, info = target_labels(target, labels)
        have = ~np.isnan(y_all) if len(y_all) else np.zeros(len(groups), bool)
        y = y_all[have]
        if len(y) == 0:
            continue
        for spec, xs in zip(specs, x):
            try:
                probes.append(fit_probe(xs[have], y, groups[have], target=target, features=spec,
                                        fitted_on={**fitted_on, **info}, folds=folds))
            except InputError as exc:
                skipped.append(str(exc))
                break
    if not probes:
        raise InputError("no probe could be fitted: " + "; ".join(skipped or ["no labels"]))
    return ProbeFile(model, tuple(probes)), skipped


def parse_feature_specs(text: str) -> list[dict]:
    """``"lookback,hidden:16"`` -> ``[{"kind": "lookback"}, {"kind": "hidden", "layers": [16]}]``;
    ``hidden:8+16`` pools two layers into one probe; ``hidden_closed:16`` and
    ``hidden_diff:16`` read the closed-book pass; a ``@last`` suffix pools the last token only."""
    specs = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        body, at, pool = part.partition("@")
        kind, _, layers = body.partition(":")
        spec = {"kind": kind}
        if kind not in KINDS:
            check_spec(spec)  # names the known kinds
        if kind != "lookback":
            try:
                spec["layers"] = [int(v) for v in layers.split("+")]
            except ValueError:
                raise InputError(f"--features: {part!r}: layers are integers, e.g. hidden:16 or hidden:8+16") from None
        if at:
            spec["pool"] = pool
        specs.append(check_spec(spec))
    if not specs:
        raise InputError("--features: give at least one feature set (lookback, hidden:LAYER)")
    return specs


def read_labelled(path: str | Path) -> list:
    """The examples of a JSONL file of raw records with labelled claims; errors name the line."""
    from franq.io import load_json, parse_example

    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                where = f"{path} line {n}"
                out.append(parse_example(load_json(line, where), where))
    if not out:
        raise InputError(f"{path}: no records")
    return out
