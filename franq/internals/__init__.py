"""Claim-level features from the passes' internals, for probes and their fitting.

A probe (:mod:`franq.internals.probe_file`) reads one named feature set of a claim:

    lookback        Lookback Lens ratios (layers x heads) of the with-passages pass
    hidden          hidden states after the given decoder layers, with-passages pass
    hidden_closed   the same from the closed-book pass (what the model holds without passages)
    hidden_diff     hidden - hidden_closed: what the passages changed in the representation

pooled over the claim's tokens: ``"pool": "mean"`` (the default) or ``"last"`` (the
claim's last token; for a whole short answer, the state the answer ends in, as semantic
entropy probes read). :func:`claim_features` computes them from a
:class:`~franq.stages.record.ClaimEvidence` whose ``internals`` / ``closed_internals`` the passes
captured (:mod:`franq.lm.capture`); :func:`capture_for` is the capture a feature spec needs.
Feature specs are plain dicts, stored in probe files: ``{"kind": "lookback"}``,
``{"kind": "hidden", "layers": [16]}``, ``{"kind": "hidden_diff", "layers": [8], "pool": "last"}``.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.errors import InputError
from franq.lm.capture import CaptureSpec

KINDS = ("lookback", "hidden", "hidden_closed", "hidden_diff")
POOLS = ("mean", "last")


def check_spec(spec: dict) -> dict:
    kind = spec.get("kind") if isinstance(spec, dict) else None
    if kind not in KINDS:
        raise InputError(f"probe 'features.kind': must be one of {list(KINDS)}, got {kind!r}")
    if kind != "lookback":
        layers = spec.get("layers")
        if not layers or not all(isinstance(la, int) and not isinstance(la, bool) and la >= 0 for la in layers):
            raise InputError(f"probe 'features.layers': a non-empty list of layer indices >= 0, got {layers!r}")
    if spec.get("pool", "mean") not in POOLS:
        raise InputError(f"probe 'features.pool': must be one of {list(POOLS)}, got {spec.get('pool')!r}")
    return spec


def spec_label(spec: dict) -> str:
    """``lookback``, ``hidden:16``, ``hidden_diff:8+16@last``: a feature set in one word."""
    label = spec["kind"] if spec["kind"] == "lookback" else f"{spec['kind']}:{'+'.join(map(str, spec['layers']))}"
    return label + ("@last" if spec.get("pool", "mean") == "last" else "")


def needs_closed(spec: dict) -> bool:
    return spec["kind"] in ("hidden_closed", "hidden_diff")


def capture_for(spec: dict) -> CaptureSpec:
    check_spec(spec)
    kind = spec["kind"]
    if kind == "lookback":
        return CaptureSpec(attention=True)
    layers = tuple(spec["layers"])
    return CaptureSpec(attention=False, hidden_layers=layers if kind in ("hidden", "hidden_diff") else (),
                       closed_hidden_layers=layers if needs_closed(spec) else ())


def _pool(internals, positions, what: str, spec: dict) -> np.ndarray:
    pos = list(positions)
    if spec.get("pool", "mean") == "last" and pos:
        pos = pos[-1:]
    return internals.pooled(pos, what, spec.get("layers"))


def claim_features(spec: dict, evidence: Sequence) -> np.ndarray:
    """Matrix ``(len(evidence), n_features)`` of the spec's features."""
    kind = spec["kind"]
    rows = []
    for e in evidence:
        pos = e.claim.token_positions
        if kind in ("lookback", "hidden", "hidden_diff") and e.internals is None:
            raise ValueError(f"claim {e.claim.text[:40]!r}: its evidence has no captured internals")
        if needs_closed(spec) and e.closed_internals is None:
            raise ValueError(f"claim {e.claim.text[:40]!r}: its evidence has no closed-book internals "
                             "(the feature set reads the closed-book pass)")
        if kind == "lookback":
            rows.append(_pool(e.internals, pos, "lookback", spec))
        elif kind == "hidden":
            rows.append(_pool(e.internals, pos, "hidden", spec))
        elif kind == "hidden_closed":
            rows.append(_pool(e.closed_internals, pos, "hidden", spec))
        else:
            rows.append(_pool(e.internals, pos, "hidden", spec) - _pool(e.closed_internals, pos, "hidden", spec))
    return np.array(rows, dtype=np.float64)
