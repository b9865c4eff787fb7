"""The natural dev sets of the long and short three-condition calibrators (issue 45 item 1),
as per-claim arrays: the raw values a calibrator reads (P_s, P_c, P_n from a verifier, UQ_faith
and UQ_unfaith from the committed generations), the labels and the answer each claim belongs to.

    expertqa-train        the 120-answer ExpertQA calibration sample (what the shipped long
                          calibrator is fitted on)
    expertqa-train-contra its answers with one true claim contradicted (synthetic corruption)
    expertqa-test         ExpertQA rand_test answers no fit has seen (205): natural, 93-95% true
    expertqa-test-contra  their contradicted copies (held out)
    nq-train / nq-test    the embedded model's attempted greedy nq-open answers (short preset;
                          clean and corrupted passage lists), labels by normalized match

WiCE held out has no committed generations (no embedded-model pass of its claims), so no
UQ values: it is not among the sets. The verifier's pass is the only costly step (about 40
minutes on one CPU thread for all sets): :func:`natural_sets` caches it per verifier in
``benchmarks/cache/natural-<verifier>.json`` (never committed; rebuilt when absent).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

FIELDS = ("p_faithful", "p_contradicted", "p_not_mentioned", "uq_faith", "uq_unfaith", "is_true")
LONG_SETS = ("expertqa-train", "expertqa-train-contra", "expertqa-test", "expertqa-test-contra")
SHORT_SETS = ("nq-train", "nq-test")


def _long_arrays(lines) -> dict:
    from franq.fit.calibrator import claim_keys, training_claims

    data = training_claims(lines)
    keys = claim_keys(lines)
    return {**{f: getattr(data, f).tolist() for f in FIELDS},
            "is_faithful": list(data.is_faithful), "answer": [k[0] for k in keys]}


def _short_arrays(rows) -> dict:
    claims = [(v, s.id if hasattr(s, "id") else None, s.claims[0], y, k) for k, (v, s, y) in enumerate(rows)
              if s.claims and s.claims[0].status == "scored"]
    out = {f: [float(getattr(c, f)) for _, _, c, _, _ in claims] for f in FIELDS if f != "is_true"}
    out["is_true"] = [float(y) for *_, y, _ in claims]
    out["variant"] = [v for v, *_ in claims]
    out["answer"] = [f"nq-{k}" for *_, k in claims]
    return out


def compute_sets(datasets: Path, verifier=None, *, names=LONG_SETS + SHORT_SETS, echo=print) -> dict:
    """The sets ``names`` with ``verifier``'s conditions (default: the shipped verifier)."""
    import time

    from franq.evaluation.common import expertqa_held_out
    from franq.fit.shipped_verifier import (TEST_CONTRADICTED, contradicted_lines, long_verifier_lines,
                                            short_verifier_results, verifier_backend)
    from franq.fit.verifier.eval import _seen_contradicted

    backend = verifier_backend(verifier)
    out = {"verifier": backend.name}
    for name in names:
        t0 = time.perf_counter()
        if name == "expertqa-train":
            arrays = _long_arrays(long_verifier_lines(datasets, backend))
        elif name == "expertqa-train-contra":
            arrays = _long_arrays(contradicted_lines(datasets, backend))
        elif name == "expertqa-test":
            arrays = _long_arrays(long_verifier_lines(datasets, backend, expertqa_held_out(datasets)))
        elif name == "expertqa-test-contra":
            seen = _seen_contradicted(datasets)
            arrays = _long_arrays([x for x in contradicted_lines(datasets, backend, TEST_CONTRADICTED)
                                   if x.id not in seen])
        elif name in SHORT_SETS:
            split, n = ("train", 300) if name == "nq-train" else ("test", 500)
            arrays = _short_arrays(short_verifier_results(datasets, backend, n, split=split)[1])
        else:
            raise ValueError(f"unknown natural set {name!r}; known: {list(LONG_SETS + SHORT_SETS)}")
        out[name] = arrays
        echo(f"{name}: {len(arrays['is_true'])} claims, {time.perf_counter() - t0:.0f} s")
    return out


def cache_path(verifier_name: str) -> Path:
    return Path("benchmarks") / "cache" / f"natural-{verifier_name}.json"


def natural_sets(datasets: Path, verifier=None, *, cache: Path | None = None, echo=print) -> dict:
    """:func:`compute_sets` for every set, read from ``cache`` when it holds them (written when not)."""
    from franq.fit.shipped_verifier import verifier_backend

    path = cache or cache_path(verifier_backend(verifier).name)
    have = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    missing = [n for n in LONG_SETS + SHORT_SETS if n not in have]
    if missing:
        have.update(compute_sets(datasets, verifier, names=missing, echo=echo))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(have), encoding="utf-8")
    return {k: ({f: np.asarray(v) if f in FIELDS else v for f, v in s.items()} if isinstance(s, dict) else s)
            for k, s in have.items()}
