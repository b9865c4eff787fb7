"""A quick check that the shipped files still match the code: the fit inputs of a few
records, recomputed by each recipe's own functions, against those recorded when the files
were last rebuilt.

A shipped calibrator is fitted on the signals its recipe computes from the committed data.
When later code changes those signals (a window rule, a refitted slot combiner, a fragment
claim read after its question), the file no longer matches what ``franq fit shipped`` would
rebuild, and nothing says so until someone runs the whole rebuild (minutes to an hour): the
fast and short verifier calibrators drifted that way, unnoticed, for a day. Each entry
with an ``inputs`` function in :mod:`franq.fit.shipped` gets a sample here: its inputs (P_s,
and P_c, P_n, UQ_faith, UQ_unfaith where the calibrator reads them; for the verifier folder,
its slot combiner's inputs: the verifier's three probabilities and the slot features) and
labels for the first :data:`RECORDS` records of its fit sets, recorded beside the sha256 of
the shipped file (of every file of a folder).
:func:`check` recomputes them (about two minutes; the observer and probe samples have the
embedded model teacher-force their answers) and
says which file reads other inputs now, or which file changed since its sample was recorded.

``franq fit shipped --record-inputs FILE`` records (after ``--in-place``, when the rebuilt
files are the shipped ones); ``franq fit shipped --check-inputs FILE`` checks, and so does
the test suite, on tests/fixtures/shipped-inputs.json.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

RECORDS = 10
"""Records of each fit set in a sample (answers, or nq-open questions with both passage lists)."""
TOLERANCE = 1e-4
"""The largest absolute difference of an input that is not a change: the verifier runs in
float32, whose last bits move with the batch's make-up and the thread count."""
DIGITS = 6


def as_record(inputs, labels, *, uq: bool = True, extra: dict | None = None) -> dict[str, list[float]]:
    """A sample's columns: the calibrator inputs of ``inputs`` (a ``ClaimInputs``; UQ_faith
    and UQ_unfaith only with ``uq``; P_c and P_n where given), the ``extra`` columns and the
    labels, rounded."""
    columns = {"p_supported": inputs.p_faithful, "p_contradicted": inputs.p_contradicted,
               "p_not_mentioned": inputs.p_not_mentioned}
    if uq:
        columns |= {"uq_faith": inputs.uq_faith, "uq_unfaith": inputs.uq_unfaith}
    columns |= {**(extra or {}), "label": labels}
    return {k: np.round(np.asarray(v, dtype=np.float64), DIGITS).tolist() for k, v in columns.items() if v is not None}


def _sha256(path: Path) -> str:
    """A file's sha256; a folder's (the verifier): that of its files' names and sha256, its
    Markdown (the card's prose) left out."""
    if path.is_dir():
        return hashlib.sha256("".join(f"{f.relative_to(path)}:{_sha256(f)}\n" for f in sorted(path.rglob("*"))
                                      if f.is_file() and f.suffix != ".md").encode()).hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sampled(names=()) -> list:
    """The entries of :mod:`franq.fit.shipped` (the named, or all) that have an inputs sample."""
    from franq.errors import InputError
    from franq.fit.shipped import lookup

    entries = [s for s in lookup(list(names)) if s.inputs is not None]
    if names and len(entries) != len(names):
        missing = sorted(set(names) - {s.name for s in entries})
        raise InputError(f"no inputs sample for {', '.join(missing)}: one is recorded for "
                         f"{', '.join(s.name for s in sampled())}")
    return entries


def record(path: str | Path, names=(), *, datasets: Path | None = None, n: int = RECORDS) -> dict:
    """Compute the samples of the named (or all sampled) files and write them to ``path``,
    keeping the entries of other files already there; returns what was written."""
    from franq.fit.generations import datasets_dir
    from franq.fit.shipped import data_dir

    path, folder = Path(path), datasets_dir(datasets)
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    files = data.get("files", {})
    entries = sampled(names)
    if set(files) - {s.name for s in entries} and data.get("records", n) != n:
        raise ValueError(f"{path} holds samples of {data['records']} records per set; record every file with {n} "
                         "(name none) or keep that number")
    for s in entries:
        files[s.name] = {"sha256": _sha256(data_dir() / s.name), "inputs": s.inputs(folder, n)}
    data = {"about": "fit inputs of the first records of each sampled shipped file's fit sets (the verifier: its "
                     "slot combiner's), as its recipe computes them, when the file had that sha256 "
                     "(franq/fit/shipped_inputs.py)",
            "command": f"franq fit shipped --record-inputs {path}", "records": n,
            "files": dict(sorted(files.items()))}
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return data


def _differences(name: str, got: dict, want: dict) -> list[str]:
    out = []
    for col in sorted(set(got) | set(want)):
        if col not in got or col not in want:
            out.append(f"{name}: {col} {'only recorded' if col in want else 'not recorded'}")
        elif len(got[col]) != len(want[col]):
            out.append(f"{name}: {col} holds {len(got[col])} values now, {len(want[col])} recorded")
        elif len(got[col]) and (gap := np.abs(np.subtract(got[col], want[col]))).max() > TOLERANCE:
            k = int(np.argmax(gap))
            out.append(f"{name}: {col}[{k}] is {got[col][k]:.6f} now, {want[col][k]:.6f} recorded "
                       f"(largest of {int((gap > TOLERANCE).sum())} differences, {gap[k]:.1e})")
    return out


def check(path: str | Path, names=(), *, datasets: Path | None = None) -> list[str]:
    """What differs between the recorded samples at ``path`` and the code and files now, one
    line per problem (empty: every sampled file reads the inputs it was fitted on)."""
    from franq.fit.generations import datasets_dir
    from franq.fit.shipped import data_dir

    path, folder = Path(path), datasets_dir(datasets)
    data = json.loads(path.read_text(encoding="utf-8"))
    problems = []
    for s in sampled(names):
        recorded = data.get("files", {}).get(s.name)
        if recorded is None:
            problems.append(f"{s.name}: no sample recorded (franq fit shipped {s.name} --record-inputs {path})")
        elif recorded["sha256"] != _sha256(data_dir() / s.name):
            problems.append(f"{s.name}: the shipped file changed since its sample was recorded; once it is what "
                            f"its recipe rebuilds, record again (franq fit shipped {s.name} --record-inputs {path})")
        elif diffs := _differences(s.name, s.inputs(folder, data.get("records", RECORDS)), recorded["inputs"]):
            how = ("refit its slot combiner (python scripts/fit_slot_combiner.py)" if s.name == "verifier"
                   else f"rebuild it (franq fit shipped {s.name} --in-place)")
            problems += [*diffs, (f"{s.name}: the code computes other inputs than the file was fitted on: {how}, "
                                  f"then record again (--record-inputs {path})")]
    return problems
