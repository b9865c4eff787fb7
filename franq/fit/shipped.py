"""The files shipped in ``franq/data/`` and how each is rebuilt: ``franq fit shipped``.

Every fitted file has one entry in :data:`SHIPPED`: its rebuild function (reading the
committed ``datasets/``, the raw public data only where named), whether the embedded
model runs, and what it was fitted on. ``example.json`` is data (the example ``franq score
--example`` scores), not fitted: it is listed in :data:`NOT_FITTED` and never rebuilt.
:func:`compare` tells a byte-identical rebuild from one whose numbers differ only in the
last digits of floating-point arithmetic, and from a real difference.

The verifier (``franq/data/verifier``) is retrained by its recipe
(:mod:`franq.fit.verifier.recipe`) only when asked (``retrain``: about 80 minutes on one CPU
thread); a check without it compares the shipped card with the recipe, with no training."""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from franq.errors import InputError
from franq.fit import shipped_calibrators as cals
from franq.fit import shipped_fast as fast
from franq.fit import shipped_pairs as pairs
from franq.fit import shipped_probes as probes
from franq.fit.verifier.recipe import compare_verifier
from franq.fit import shipped_verifier as verifier
from franq.fit.verifier import eval as verifier_eval


@dataclass(frozen=True)
class Shipped:
    """One fitted file of ``franq/data/``."""

    name: str
    rebuild: Callable[..., Path]  # (datasets dir, out dir, raw dir or None) -> the written file
    fitted_on: str
    model_passes: str = ""        # empty: no model runs
    raw: bool = False             # needs the raw public data (--raw / $FRANQ_RAW_DATA)
    evaluate: Callable[[Path, Path], str] | None = None  # (datasets, rebuilt file) -> a results table
    recipe_check: Callable[[Path], list[str]] | None = None  # (datasets) -> differences; rebuilt only on request
    inputs: Callable[[Path, int], dict] | None = None  # (datasets, n) -> fit inputs of n records: shipped_inputs


_CAL = "SmolLM2-135M-Instruct.Q4-1-combined-v1.json"
BASE: tuple[Shipped, ...] = (
    Shipped("faithfulness-combined.json", cals.combined_map,
            "text features of the 2,269 support-labelled ExpertQA train claims (datasets/expertqa/train.jsonl)"),
    Shipped("faithfulness-context-pmi.json", cals.context_pmi_map,
            "mean token PMI of the 642 labelled claims of the seeded 120-answer ExpertQA train sample; passes from "
            "datasets/generations/long-expertqa.*"),
    Shipped(f"calibrator-long-embedded-{_CAL}", cals.long_calibrator,
            "condition variant on the 574 is_true-labelled claims of the 120-answer sample; scores from "
            "datasets/generations/long-expertqa.*", inputs=cals.long_inputs),
    Shipped(f"calibrator-short-embedded-{_CAL}", cals.short_calibrator,
            "condition variant on the 448 attempted greedy answers of 300 nq-open train questions; the short "
            "preset on the samples in datasets/generations/short-nq-open.*",
            evaluate=cals.evaluate_short_calibrator, inputs=cals.short_inputs),
    Shipped(f"calibrator-short-observer-embedded-{_CAL}", cals.observer_calibrator,
            "condition variant, observer mix answer_share / answer_consistency, on the 90 answers of the distractor "
            "pairs of nq-open train questions 1-45", model_passes="each answer teacher-forced: about 2 minutes on CPU"),
    Shipped(f"calibrator-probe-embedded-{_CAL}", probes.probe_calibrator,
            "condition variant on out-of-fold semantic entropy probe outputs of the 448 nq-open train answers",
            model_passes="two passes per answer with hidden states, 448 answers: 25-45 minutes on CPU"),
    Shipped("probe-SmolLM2-135M-Instruct.Q4_1.json", probes.probe_file,
            "faithfulness / truth probes on 170 ExpertQA train + WiCE fit answers; semantic entropy probes on the "
            "448 nq-open train answers",
            model_passes="with-passages pass with attention capture + closed-book pass, 172 long answers "
                         "(3.5-4.5 s each on CPU) plus the semantic entropy probes' passes: 40-60 minutes"),
)
NOT_FITTED = {"example.json": "the example answer `franq score --example` scores: data, not fitted"}


def data_dir() -> Path:
    return Path(str(resources.files("franq").joinpath("data")))


def _retrain_verifier(datasets: Path, out: Path, raw) -> Path:
    """The shipped verifier's recipe (its base, then v7) into ``out/verifier``; the base
    beside it, or in a temporary folder when ``out`` is franq/data/ itself."""
    import tempfile

    from franq.evaluation.common import raw_data_dir
    from franq.fit.verifier.recipe import SHIPPED as RECIPE
    from franq.fit.verifier.recipe import fit_recipe

    base_into = Path(tempfile.mkdtemp(prefix="franq-verifier-base-")) if out.resolve() == data_dir().resolve() else None
    fit_recipe(RECIPE, raw=raw_data_dir(raw), datasets=datasets, out=out / "verifier", base_into=base_into)
    return out / "verifier"


def _verifier_recipe_check(datasets: Path) -> list[str]:
    from franq.fit.verifier.recipe import check_card

    return check_card(json.loads((data_dir() / "verifier" / "card.json").read_text(encoding="utf-8")), datasets)


VERIFIER = Shipped("verifier", _retrain_verifier,
                   "the recipe in franq/fit/verifier/recipe.py: v7 from v1 (its weights from git at 10e1ccf) on "
                   "datasets/verifier/manifest-v7.json, lr 2e-5, seed 0",
                   model_passes="fine-tuning v7: about 40 minutes on one CPU thread (retrain only)", raw=True,
                   recipe_check=_verifier_recipe_check, inputs=verifier_eval.combiner_inputs)
"""The shipped verifier folder: retrained only on request; checked against its recipe."""
WITH_VERIFIER: tuple[Shipped, ...] = (
    Shipped(verifier.LONG_NAME, verifier.long_verifier_calibrator,
            "three-condition (condition variant) on the is_true-labelled claims of the 120-answer ExpertQA sample, "
            "its answers with one true claim contradicted, and (T_n) each such claim and its original as not "
            "mentioned; UQ values from datasets/generations/long-expertqa.*, P_s/P_c/P_n from the shipped verifier",
            model_passes="the verifier over every claim's passage windows (no causal-LM pass)",
            evaluate=lambda datasets, path: verifier_eval.evaluate_long(datasets, path), inputs=verifier.long_inputs),
    Shipped(verifier.SHORT_NAME, verifier.short_verifier_calibrator,
            "three-condition (soft variant) on the attempted greedy answers of 300 nq-open train questions; the short "
            "preset on the samples in datasets/generations/short-nq-open.*, the shipped verifier",
            model_passes="the verifier over (question + answer) and each answer's passage windows",
            evaluate=lambda datasets, path: verifier_eval.evaluate_short(datasets, path), inputs=verifier.short_inputs),
    Shipped(pairs.OBSERVER_NAME, pairs.observer_verifier_calibrator,
            "three-condition (soft variant), observer mix answer_share / answer_consistency, on the distractor pairs "
            f"of nq-open train questions 1-{pairs.OBSERVER_TRAIN} (answers the embedded model did not write), the "
            "shipped verifier", model_passes="each answer teacher-forced: about 3 minutes on CPU",
            evaluate=lambda datasets, path: pairs.evaluate_pairs(datasets, path), inputs=pairs.pairs_inputs),
    Shipped(pairs.PROBE_NAME, pairs.probe_verifier_calibrator,
            "three-condition (soft variant), semantic entropy probes se_probe / se_probe_closed (no samples), on the "
            f"distractor pairs of nq-open train questions 1-{pairs.OBSERVER_TRAIN} (answers the embedded model did "
            "not write), the shipped verifier", model_passes="each answer teacher-forced twice with hidden states: "
            "about 10 minutes on CPU",
            evaluate=lambda datasets, path: pairs.evaluate_pairs(datasets, path),
            inputs=lambda datasets, n: pairs.pairs_inputs(datasets, n, "probe")),
    Shipped(fast.NAMES["fast"], fast.fast_calibrator,
            "isotonic map of P_supported on the claims of ExpertQA train (truth label, citation markers stripped) "
            "under the fast mode: the shipped verifier on each claim's closest window", model_passes="the verifier only (no causal LM): about 5 minutes on one CPU thread, "
                                           "shared with the next file", evaluate=fast.evaluate_fast,
            inputs=lambda datasets, n: fast.fit_inputs(datasets, "fast", n)),
    Shipped(fast.NAMES["fast_short"], fast.fast_short_calibrator,
            "isotonic map of P_supported on the short answers of the fast mode: the attempted greedy answers of 300 "
            "nq-open train questions read whole with their question (label: normalized match)",
            model_passes="the verifier only (no causal LM), the same pass as the previous file",
            inputs=lambda datasets, n: fast.fit_inputs(datasets, "fast_short", n)),
)
"""The calibrators of the shipped verifier (``franq/data/verifier``: three-condition, and the
fast preset's): listed with the other fitted files once that verifier is shipped."""
SHIPPED: tuple[Shipped, ...] = BASE + ((VERIFIER, *WITH_VERIFIER) if (data_dir() / "verifier" / "card.json").is_file()
                                      else ())


def lookup(names) -> list[Shipped]:
    """The entries named (all when none), in table order; an error lists the known names."""
    known = {s.name: s for s in (*SHIPPED, *WITH_VERIFIER)}
    for n in names:
        if n not in known:
            why = f" ({NOT_FITTED[n]})" if n in NOT_FITTED else ""
            raise InputError(f"{n!r} is not a fitted shipped file{why}; known: {', '.join(known)}")
    return [s for s in SHIPPED if not names or s.name in names] + [
        s for s in WITH_VERIFIER if s.name in names and s not in SHIPPED]


def _numbers(a, b, path: str = "") -> tuple[float, list[str]]:
    """The largest relative difference between the numbers of two JSON values, and the
    places where they differ in anything but a number's value."""
    if isinstance(a, bool) or isinstance(b, bool) or not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        if isinstance(a, dict) and isinstance(b, dict):
            worst, other = 0.0, [f"{path}/{k}: only in {'rebuilt' if k in a else 'shipped'}"
                                 for k in sorted(set(a) ^ set(b))]
            for k in sorted(set(a) & set(b)):
                w, o = _numbers(a[k], b[k], f"{path}/{k}")
                worst, other = max(worst, w), other + o
            return worst, other
        if isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                return 0.0, [f"{path}: {len(a)} values rebuilt, {len(b)} shipped"]
            worst, other = 0.0, []
            for i, (x, y) in enumerate(zip(a, b)):
                w, o = _numbers(x, y, f"{path}[{i}]")
                worst, other = max(worst, w), other + o
            return worst, other
        return 0.0, ([] if a == b else [f"{path}: {json.dumps(a)[:60]} rebuilt, {json.dumps(b)[:60]} shipped"])
    if a == b:
        return 0.0, []
    return abs(a - b) / max(abs(a), abs(b), 1e-300), []


ROUNDING = 1e-12
"""Numbers closer than this (relative) differ only in the last digits of float arithmetic."""


def compare(rebuilt: Path, shipped: Path) -> tuple[bool, str]:
    """``(identical, why)``: byte-identical, or what differs (float rounding in the last
    digits, or the keys / values that differ and by how much)."""
    a, b = rebuilt.read_bytes(), shipped.read_bytes()
    if a == b:
        return True, "identical"
    try:
        worst, other = _numbers(json.loads(a), json.loads(b))
    except ValueError:
        return False, "differs (not JSON)"
    if other:
        more = f" (+{len(other) - 2} more)" if len(other) > 2 else ""
        return False, "differs: " + "; ".join(other[:2]) + more + (
            f"; numbers up to {worst:.1e} relative" if worst else "")
    if worst <= ROUNDING:
        return False, f"differs in float rounding only (largest relative difference {worst:.1e})"
    return False, f"differs: numbers up to {worst:.1e} relative"


def _size(path: Path) -> int:
    """A file's bytes; a verifier folder's weights' bytes."""
    return (path / "model.safetensors").stat().st_size if path.is_dir() else path.stat().st_size


def rebuild(names=(), *, out: Path, datasets: Path | None = None, raw: str | Path | None = None,
            check: bool = False, evaluate: bool = False, retrain: bool = False,
            echo: Callable[[str], None] = print) -> list[dict]:
    """Rebuild the named (or all) shipped files into ``out``; with ``check``, compare each
    with the shipped one; with ``evaluate``, the results table of those that have one
    (row key ``evaluation``). One row per file: name, bytes, seconds, and the comparison
    (``why`` says which kind of check ran). The verifier is retrained only with
    ``retrain``; without it, ``check`` compares its card with its recipe (no training)."""
    import time

    from franq.fit.generations import datasets_dir

    entries = lookup(list(names))
    folder = datasets_dir(datasets)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for s in entries:
        if s.recipe_check is not None and not retrain:
            if check:
                t = time.perf_counter()
                diffs = s.recipe_check(folder)
                rows.append({"name": s.name, "bytes": None, "seconds": round(time.perf_counter() - t, 1),
                             "shipped_bytes": _size(data_dir() / s.name), "identical": not diffs,
                             "why": "recipe check, not retrained: " + (
                                 "the card matches the recipe (manifest sha256, base and its weights sha256, lr, "
                                 "seed, epochs, batch, steps) and the datasets files" if not diffs
                                 else "differs: " + "; ".join(diffs))})
            elif names:
                raise InputError(f"{s.name} is retrained only with --retrain-verifier ({s.model_passes}); "
                                 "--check compares its card with its recipe")
            else:
                echo(f"{s.name}: not retrained (--retrain-verifier: {s.model_passes})")
            continue
        echo(f"{s.name}: rebuilding" + (f" (model passes: {s.model_passes})" if s.model_passes else ""))
        t = time.perf_counter()
        path = s.rebuild(folder, out, raw)
        row = {"name": s.name, "bytes": _size(path), "seconds": round(time.perf_counter() - t, 1),
               "path": str(path)}
        if check:
            shipped = data_dir() / s.name
            same, why = (compare_verifier(path, shipped) if path.is_dir() else compare(path, shipped)) \
                if shipped.exists() else (False, "no shipped file")
            row |= {"shipped_bytes": _size(shipped) if shipped.exists() else None, "identical": same, "why": why}
        if evaluate and s.evaluate is not None:
            row["evaluation"] = s.evaluate(folder, path)
        rows.append(row)
    return rows


def format_table(rows: list[dict]) -> str:
    """The rebuild rows as a Markdown table."""
    check = any("why" in r for r in rows)
    head = "| file | bytes rebuilt | bytes shipped | seconds | result |" if check else "| file | bytes | seconds |"
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]
    for r in rows:
        if check:
            lines.append(f"| {r['name']} | {'-' if r['bytes'] is None else r['bytes']} | {r['shipped_bytes']} | "
                         f"{r['seconds']:g} | {r['why']} |")
        else:
            lines.append(f"| {r['name']} | {r['bytes']} | {r['seconds']:g} |")
    return "\n".join(lines)


def describe() -> str:
    """The table of shipped files: what each is fitted on and what its rebuild costs."""
    lines = [f"{s.name}\n    fitted on: {s.fitted_on}\n    model passes: {s.model_passes or 'none'}"
             + ("\n    raw data: the SOURCES.md files (--raw / $FRANQ_RAW_DATA)" if s.raw else "")
             + ("\n    drift check: its fit inputs sampled (--check-inputs)" if s.inputs else "") for s in SHIPPED]
    lines += [f"{n}\n    not fitted: {why}" for n, why in NOT_FITTED.items()]
    return "\n".join(lines)

