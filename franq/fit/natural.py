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
    wice-heldout          WiCE held-out Wikipedia sentences whose cited page fits
                          :data:`WICE_MAX_CHARS` (104 of 144): UQ values from the committed
                          snapshot :data:`WICE_SNAPSHOT`; the label is WiCE's support label
                          (supported by the cited page), as ``is_true``: WiCE has no truth labels

The verifier's pass is the costly step (about 40 minutes on one CPU thread for all sets):
:func:`natural_sets` caches it per verifier in ``benchmarks/cache/natural-<verifier>.json``
(never committed; rebuilt when absent). The WiCE snapshot is ``franq score --calibrator none``
output of :func:`wice_records` with the embedded model (:func:`wice_snapshot_command`).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

FIELDS = ("p_faithful", "p_contradicted", "p_not_mentioned", "uq_faith", "uq_unfaith", "is_true")
LONG_SETS = ("expertqa-train", "expertqa-train-contra", "expertqa-test", "expertqa-test-contra", "wice-heldout")
SHORT_SETS = ("nq-train", "nq-test")


def _long_arrays(lines) -> dict:
    from franq.fit.training_claims import claim_keys, training_claims

    data = training_claims(lines)
    keys = claim_keys(lines)
    return {**{f: getattr(data, f).tolist() for f in FIELDS},
            "is_faithful": list(data.is_faithful), "answer": [k[0] for k in keys]}


def _short_arrays(rows, name: str) -> dict:
    claims = [(v, s.id if hasattr(s, "id") else None, s.claims[0], y, k) for k, (v, s, y) in enumerate(rows)
              if s.claims and s.claims[0].status == "scored"]
    out = {f: [float(getattr(c, f)) for _, _, c, _, _ in claims] for f in FIELDS if f != "is_true"}
    out["is_true"] = [float(y) for *_, y, _ in claims]
    out["variant"] = [v for v, *_ in claims]
    out["answer"] = [f"{name}-{k}" for *_, k in claims]
    return out


WICE_MAX_CHARS = 8000
"""The WiCE held-out items measured: those whose cited page has at most this many characters
(104 of 144; about 2,000 tokens, so the embedded model reads the whole page, untruncated)."""
WICE_SNAPSHOT = "long-wice-heldout.embedded-SmolLM2-135M-Instruct.Q4-1.jsonl.gz"


def wice_records(datasets: Path) -> list[dict]:
    """The WiCE held-out records whose passages fit :data:`WICE_MAX_CHARS`, in file order."""
    rows = [json.loads(x) for x in (datasets / "wice" / "heldout.jsonl").read_text(encoding="utf-8").splitlines()
            if x.strip()]
    return [r for r in rows if sum(len(p["text"]) for p in r["passages"]) <= WICE_MAX_CHARS]


def wice_snapshot_command() -> str:
    """How :data:`WICE_SNAPSHOT` was made (the records of :func:`wice_records` in a file)."""
    return ("franq score wice-heldout-8k.jsonl -o long-wice-heldout.jsonl --calibrator none --threads 1 "
            "&& gzip long-wice-heldout.jsonl  # then moved to datasets/generations/")


def wice_lines(datasets: Path, backend) -> list:
    """The WiCE snapshot's results, each claim labelled ``is_true`` = its support label, with
    ``backend``'s P_s, P_c, P_n (UQ values as scored: they do not depend on the verifier)."""
    import gzip

    from franq.errors import InputError
    from franq.fit.shipped_verifier import with_conditions
    from franq.results import read_results

    path = datasets / "generations" / WICE_SNAPSHOT
    if not path.is_file():
        raise InputError(f"{path}: missing; make it with: {wice_snapshot_command()}")
    rows = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for x in f:
            if x.strip():
                row = json.loads(x)
                for c in row["claims"]:
                    c["is_true"] = c.get("is_faithful")  # WiCE labels support only
                rows.append(row)
    lines = list(read_results(rows, with_input=True, name=str(path)))
    if lines and lines[0].result.stack.to_dict().get("faithfulness") == backend.name:
        return lines  # scored by this verifier: its conditions are already there
    return with_conditions(lines, [line.example.passages for line in lines], backend)


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
        elif name == "wice-heldout":
            arrays = _long_arrays(wice_lines(datasets, backend))
        elif name in SHORT_SETS:
            split, n = ("train", 300) if name == "nq-train" else ("test", 500)
            arrays = _short_arrays(short_verifier_results(datasets, backend, n, split=split)[1], name)
        else:
            raise ValueError(f"unknown natural set {name!r}; known: {list(LONG_SETS + SHORT_SETS)}")
        out[name] = arrays
        echo(f"{name}: {len(arrays['is_true'])} claims, {time.perf_counter() - t0:.0f} s")
    return out


def cache_path(verifier_name: str) -> Path:
    return Path("benchmarks") / "cache" / f"natural-{verifier_name}.json"


def natural_sets(datasets: Path, verifier=None, *, cache: Path | None = None, echo=print,
                 compute: bool = True, names: tuple[str, ...] = LONG_SETS + SHORT_SETS) -> dict:
    """:func:`compute_sets` for the sets ``names`` (default: all), read from ``cache`` when it
    holds them (written when not; with ``compute`` False, the sets the cache lacks are left
    out)."""
    from franq.fit.shipped_verifier import verifier_backend

    path = cache or cache_path(verifier_backend(verifier).name)
    have = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    missing = [n for n in names if n not in have]
    if missing and not compute:
        echo(f"not in the cache {path}, left out: {missing}")
    elif missing:
        have.update(compute_sets(datasets, verifier, names=missing, echo=echo))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(have), encoding="utf-8")
    return {k: ({f: np.asarray(v) if f in FIELDS else v for f, v in s.items()} if isinstance(s, dict) else s)
            for k, s in have.items()}


LONG_EVALUATION = {"expertqa-rand_test": ("expertqa-test",),
                   "expertqa-rand_test+contradicted": ("expertqa-test", "expertqa-test-contra"),
                   "wice-heldout (label: supported)": ("wice-heldout",)}
"""The dev sets a long-form calibrator file's ``evaluation`` reports (name: the natural sets
joined), none of them fitted on: ExpertQA rand_test's natural answers, the same with their
contradicted copies, WiCE held out (its label is support, not truth)."""


def long_evaluation(cal, datasets: Path, verifier=None, *, echo=print) -> dict:
    """``cal``'s ECE, Brier, the constant's Brier and AUROC on :data:`LONG_EVALUATION`, each
    rounded to 4 places (AUROC None on one class), for the file's ``evaluation``; the
    verifier's pass over the sets is read from (or written to) the cache of
    :func:`natural_sets` beside ``datasets``."""
    from franq.fit.shipped_verifier import verifier_backend

    names = tuple(sorted({n for parts in LONG_EVALUATION.values() for n in parts}))
    cache = datasets.resolve().parent / cache_path(verifier_backend(verifier).name)
    sets = natural_sets(datasets, verifier, cache=cache, echo=echo, names=names)
    out = {}
    for label, parts in LONG_EVALUATION.items():
        s = join(*(sets[p] for p in parts))
        out[label] = evaluation_row(cal.predict(inputs(s)), s["is_true"])
    return out


def evaluation_row(p, y) -> dict:
    """One dev set's row of a calibrator file's ``evaluation``: :func:`scores` of P(true)
    ``p`` for labels ``y``, rounded to 4 places (AUROC None on one class)."""
    m = scores(p, {"is_true": y})
    return {"claims": m["n"], "share_true": round(m["true"], 4), "ece": round(m["ece"], 4),
            "brier": round(m["brier"], 4), "constant_brier": round(m["constant_brier"], 4),
            "auroc": None if m["auroc"] != m["auroc"] else round(m["auroc"], 4)}


# ---------------------------------------------------------------------- working with the sets
def join(*sets: dict) -> dict:
    """The claims of ``sets`` one after the other (answer ids stay each set's own)."""
    keys = [k for k in (*FIELDS, "answer", "is_faithful", "variant") if all(k in s for s in sets)]
    return {k: (np.concatenate([np.asarray(s[k]) for s in sets]) if k in FIELDS else sum((list(s[k]) for s in sets), []))
            for k in keys}


def subset(s: dict, mask) -> dict:
    idx = np.flatnonzero(mask)
    return {k: (np.asarray(v)[idx] if k in FIELDS else [v[i] for i in idx]) for k, v in s.items()}


def inputs(s: dict):
    from calibration.contract import ClaimInputs

    return ClaimInputs(s["p_faithful"], s["uq_faith"], s["uq_unfaith"], p_contradicted=s["p_contradicted"],
                       p_not_mentioned=s["p_not_mentioned"])


def raw3(s: dict) -> np.ndarray:
    """The uncalibrated three-condition mix (UQ_faith for supported and contradicted)."""
    return (s["p_faithful"] + s["p_contradicted"]) * s["uq_faith"] + s["p_not_mentioned"] * s["uq_unfaith"]


def scores(p, s: dict, *, boot: int = 0) -> dict:
    """ECE, Brier, the constant predictor's Brier (the set's own share true: the best
    constant), AUROC of ``p`` on ``s``; with ``boot``, 95% bootstrap intervals over answers
    and the ECE floor (:func:`calibration.metrics.ece_floor`: what a calibrated ``p`` shows
    on a set this size)."""
    from calibration.metrics import brier_score, ece_floor, expected_calibration_error
    from franq.evaluation.common import auroc, bootstrap

    y = np.asarray(s["is_true"], dtype=float)
    p = np.asarray(p, dtype=float)
    out = {"n": len(y), "true": float(y.mean()), "ece": expected_calibration_error(p, y), "brier": brier_score(p, y),
           "constant_brier": float(y.mean() * (1 - y.mean())),
           "auroc": auroc(p, y) if 0 < y.sum() < len(y) else float("nan")}
    if boot:
        for name, stat in (("ece", expected_calibration_error), ("auroc", auroc)):
            out[name + "_ci"] = bootstrap(stat, p, y, groups=list(s["answer"]), n_boot=boot)[1:]
        out["ece_floor"] = ece_floor(p, n_sim=boot)
    return out


def gold_conditions(s: dict, contradicted: bool = False) -> list:
    """Per claim, the condition from the data: supported / not mentioned from its support
    label (None without one), or contradicted for a set of corrupted claims."""
    if contradicted:
        return ["contradicted"] * len(s["is_true"])
    return [None if g is None else "supported" if g else "not_mentioned" for g in s["is_faithful"]]


class MixMapCalibrator:
    """"Fit the final map on the mix": one isotonic map of the raw three-condition mix
    (:func:`raw3`), the alternative issue 45 names to calibrating each condition first."""

    def fit(self, s: dict, sample_weight=None) -> MixMapCalibrator:
        from calibration.isotonic import IsotonicCalibrator

        self.map_ = IsotonicCalibrator().fit(raw3(s), s["is_true"], sample_weight)
        return self

    def predict_set(self, s: dict) -> np.ndarray:
        return self.map_.predict(raw3(s))


def training_claims_of(s: dict):
    """A set as :class:`~franq.fit.training_claims.TrainingClaims` (what ``franq fit calibrator``
    fits on), its answers as groups."""
    from franq.fit.training_claims import TrainingClaims

    _, groups = np.unique(np.asarray(s["answer"], dtype=str), return_inverse=True)
    faithful = tuple(s["is_faithful"]) if "is_faithful" in s else (None,) * len(s["is_true"])
    return TrainingClaims(np.asarray(s["p_faithful"], dtype=float), np.asarray(s["uq_faith"], dtype=float),
                          np.asarray(s["uq_unfaith"], dtype=float), np.asarray(s["is_true"], dtype=float), faithful,
                          {}, {}, {}, groups, np.asarray(s["p_contradicted"], dtype=float),
                          np.asarray(s["p_not_mentioned"], dtype=float))
