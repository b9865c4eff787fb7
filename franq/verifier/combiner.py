""":class:`SlotCombiner` fuses the slot features of :mod:`franq.verifier.slots` with the
verifier (softmax of the verifier's log-probabilities plus weighted mismatches and a per-class
bias), a small JSON (slot-combiner.json in the verifier directory) fitted by
scripts/fit_slot_combiner.py on held-apart data made only from SOURCES.md files: synthetic
pairs (three-way labels) and natural claims with support labels (a supported claim
"supported", an unsupported one "not supported": contradicted or not mentioned, which a
support label does not tell apart), so the natural claims calibrate supported against the rest
and the synthetic pairs contradicted against not mentioned.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from franq.errors import InputError
from franq.verifier.slots import FEATURES, features

COMBINER_FILE = "slot-combiner.json"

INPUTS = FEATURES[3:]
"""What the combiner reads besides the verifier: the mismatches and the evidence score (not the
overlap and counts: on synthetic pairs they tell how a pair was made, not whether it holds)."""


def _softmax(z: np.ndarray) -> np.ndarray:
    return (e := np.exp(z - z.max(axis=1, keepdims=True))) / e.sum(axis=1, keepdims=True)


def _design(p3: np.ndarray, feats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What the combiner reads of ``n`` claims: the verifier's ``(n, 3)`` log-probabilities
    (clipped at 1e-6) and the :data:`INPUTS` columns of their ``(n, len(FEATURES))`` features."""
    lp = np.log(np.clip(np.asarray(p3, dtype=np.float64).reshape(-1, 3), 1e-6, 1.0))
    return lp, np.asarray(feats, dtype=np.float64).reshape(len(lp), -1)[:, len(FEATURES) - len(INPUTS):]


@dataclass(frozen=True)
class SlotCombiner:
    """(P_s, P_c, P_n) = softmax(log P_verifier + W f + b): the verifier's log-probabilities
    kept as they are (an offset), the slot features ``f`` (:data:`INPUTS`) moving mass
    between the three, and a per-class bias ``b`` (the three-way output's calibration on
    held-apart data); W's and b's supported entries are 0. A file without ``bias`` (the
    first combiners) has b = 0: a claim with no mismatch then keeps the verifier's
    probabilities exactly."""

    weights: np.ndarray  # (3, len(INPUTS))
    meta: dict
    bias: np.ndarray = field(default_factory=lambda: np.zeros(3))

    @classmethod
    def load(cls, path: str | Path) -> SlotCombiner:
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise InputError(f"slot_combiner: cannot read {path}: {e}") from None
        if data.get("inputs") != list(INPUTS):
            raise InputError(f"slot_combiner: {path} was fitted on inputs {data.get('inputs')}, "
                             f"this franq computes {list(INPUTS)}")
        weights = np.asarray(data.get("weights"), dtype=np.float64)
        if weights.shape != (3, len(INPUTS)) or not np.isfinite(weights).all():
            raise InputError(f"slot_combiner: {path}: weights must be 3 x {len(INPUTS)} finite numbers")
        try:
            bias = np.asarray(data.get("bias", [0.0, 0.0, 0.0]), dtype=np.float64)
        except (TypeError, ValueError):
            bias = np.full(1, np.nan)
        if bias.shape != (3,) or not np.isfinite(bias).all():
            raise InputError(f"slot_combiner: {path}: bias must be 3 finite numbers")
        version = data.get("version", 1)
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise InputError(f"slot_combiner: {path}: version must be an integer >= 1, got {version!r}")
        return cls(weights, {k: v for k, v in data.items() if k not in ("inputs", "weights", "bias")}, bias)

    @property
    def version(self) -> int:
        """Which fit of this verifier's combiner (1 when the file does not say): the backend's
        name carries it from 2 on (``...:slots2``), so calibrators fitted on another fit's
        output, and caches of its reads, are not taken for this one's."""
        return int(self.meta.get("version", 1))

    @property
    def suffix(self) -> str:
        """What the backend's name ends in: ``:slots``, ``:slots2``, ..."""
        return ":slots" + (str(self.version) if self.version > 1 else "")

    def apply(self, p3: np.ndarray, feats: np.ndarray) -> np.ndarray:
        """``(n, 3)`` probabilities (supported, contradicted, not mentioned) from the
        verifier's ``(n, 3)`` and the ``(n, len(FEATURES))`` slot features."""
        lp, f = _design(p3, feats)
        return _softmax(lp + f @ self.weights.T + self.bias)

    def to_json(self) -> str:
        return json.dumps({**self.meta, "inputs": list(INPUTS), "weights": self.weights.round(6).tolist(),
                           "bias": self.bias.round(6).tolist()}, indent=1)


def fit_combiner(p3: np.ndarray, feats: np.ndarray, y: np.ndarray, *, l2: float = 1.0, meta: dict | None = None,
                 bias: bool = False, sample_weight: np.ndarray | None = None) -> SlotCombiner:
    """Fit W (and b with ``bias``) by weighted maximum likelihood with an L2 penalty on W
    (``l2`` * |W|^2 / n) on held-apart rows (``y``: 0 supported, 1 contradicted, 2 not
    mentioned, 3 not supported, i.e. contradicted or not mentioned: what a support label
    says of an unsupported claim, its likelihood P_c + P_n; ``sample_weight``: each row's
    weight, e.g. 1 / its set's size so that every set counts the same)."""
    from scipy.optimize import minimize

    y = np.asarray(y, dtype=int)
    if not {0, 1, 2} <= set(y.tolist()) <= {0, 1, 2, 3}:
        raise InputError(f"slot_combiner: the fit rows must hold labels 0, 1 and 2 (3: not supported), got "
                         f"{sorted(set(y.tolist()))}")
    lp, x = _design(p3, feats)
    n, k = x.shape
    wt = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)

    def unpack(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        w = np.vstack([np.zeros(k), theta[:2 * k].reshape(2, k)])
        return w, (np.r_[0.0, theta[2 * k:]] if bias else np.zeros(3))

    def loss(theta: np.ndarray) -> float:
        w, b = unpack(theta)
        z = lp + x @ w.T + b
        z = z - z.max(axis=1, keepdims=True)
        lse = np.log(np.exp(z).sum(axis=1))
        ll = np.where(y == 3, np.logaddexp(z[:, 1], z[:, 2]), z[np.arange(n), np.minimum(y, 2)]) - lse
        return float(-(wt * ll).sum() / wt.sum() + l2 * (w ** 2).sum() / n)

    w, b = unpack(minimize(loss, np.zeros(2 * k + (2 if bias else 0)), method="L-BFGS-B").x)
    return SlotCombiner(w, dict(meta or {}), b)


def load_combiner(verifier, setting: str | None = None, *, required: bool = True) -> SlotCombiner | None:
    """The combiner for ``verifier`` (a :class:`~franq.verifier.Verifier`): the file the
    setting names, else ``slot-combiner.json`` of its directory; it must have been fitted
    for this verifier (its card's name). Without ``required``, a missing file or one fitted
    for another verifier gives None instead of a one-line error."""
    path = Path(setting) if setting else Path(verifier.path) / COMBINER_FILE
    if not path.is_file():
        if not required:
            return None
        raise InputError(f"[faithfulness.verifier] slot_check: no combiner at {path} (fit one for this verifier "
                         "with scripts/fit_slot_combiner.py, or set slot_check = false)")
    combiner = SlotCombiner.load(path)
    fitted = combiner.meta.get("verifier")
    if fitted != verifier.name:
        if not required:
            return None
        raise InputError(f"[faithfulness.verifier] slot_combiner: {path} was fitted for {fitted}, not {verifier.name} "
                         "(refit it with scripts/fit_slot_combiner.py --verifier DIR)")
    return combiner


def next_version(path: str | Path) -> int:
    """The version a refit written to ``path`` takes: one more than the combiner there, 1 for
    a new file (scripts/fit_slot_combiner.py)."""
    path = Path(path)
    return SlotCombiner.load(path).version + 1 if path.is_file() else 1


def combiner_for(verifier, slot_check: bool | None, setting: str | None = None) -> SlotCombiner | None:
    """The combiner the ``slot_check`` setting asks for: ``False``, none; ``True``, the one
    :func:`load_combiner` finds (or its one-line error); ``None`` (unset), the one of the
    verifier's directory when it holds a combiner fitted for this verifier (the shipped
    verifier does), else none; a ``setting`` naming a file makes it required."""
    if slot_check is False:
        return None
    return load_combiner(verifier, setting, required=slot_check is True or bool(setting))


def recheck(combiner: SlotCombiner, p3: np.ndarray, items: list[tuple[list[str], str]]) -> np.ndarray:
    """The verifier's ``(n, 3)`` claim probabilities after the slot check of each
    ``(passages, claim)``; a claim with no passage text keeps the verifier's."""
    p3 = np.asarray(p3, dtype=np.float64).reshape(-1, 3)
    out = p3.copy()
    rows = [k for k, (passages, _) in enumerate(items) if any(p.strip() for p in passages)]
    if rows:
        feats = np.array([features(items[k][1], list(items[k][0])) for k in rows])
        out[rows] = combiner.apply(p3[rows], feats)
    return out
