"""The ``fast`` mode's shipped calibrators (issue 46.3): P(true) = an isotonic map of the
verifier's P_supported, fitted with the calibration code every calibrator uses
(:class:`calibration.franq.FranqCalibrator`, variant ``none`` with the faithfulness map: the
mix with UQ_faith = 1 and UQ_unfaith = 0 is P_supported, so the calibrated P(true) is the
map of P_supported, fitted on the labels). Two files, as the mode has two presets
(:data:`NAMES`): ``fast`` (claims split from an answer, or given) and ``fast_short`` (a
short answer read whole with its question), whose base rates differ (93% against 58% true
on their training claims). Rebuilt by ``franq fit shipped calibrator-fast-verifier.json
calibrator-fast_short-verifier.json`` (:mod:`franq.fit.shipped`); each file states its
numbers on the dev sets below (``evaluation``: :func:`dev_evaluation`, its own preset's
claims); ``--evaluate`` adds the table of :func:`evaluate_fast`.

Fitted on (:data:`FIT_SETS`, natural claims only, each scored by the ``fast`` mode: the
shipped verifier on each claim's closest passage window, no causal LM; each file on the
claims its preset scored):

- ``fast``: the human claims of ``datasets/expertqa/train.jsonl`` (ExpertQA rand_val +
  domain_val) with a truth label (``is_true``), their ``[n]`` citation markers stripped from
  the claims and the answer (a marker is a cue of support, not the method);
- ``fast_short``: short answers to the 300 committed nq-open train questions, with the clean
  and the corrupted passage lists (``datasets/generations/short-nq-open.*``), read whole: the
  embedded model's attempted greedy answers (label: normalized match; 9% right) beside each
  question's gold answer (true), so the map is fitted where 58% of answers are right, as a
  capable answerer's are, not at a 135M model's 9%. Fitted on the model's answers alone,
  every short answer mapped to P(true) .27 or less, so with a threshold of 0.5 every right
  answer the passages support was ``likely_false`` (experiments/2026-11-28-fast-short-base-rate:
  on nq-open test's model and gold answers together ECE .476 -> .030).

WiCE fit (``datasets/wice/fit.jsonl``: Wikipedia sentences labelled for support by their
cited pages, ``is_faithful``) is one of the candidate sets (:data:`TRAIN`), left out of the
shipped fit: pooled with ExpertQA it moved ExpertQA held out's ECE from .023 to .085 and left
WiCE held out's at .43 (experiments/2026-11-28-fast-calibrator-sets).

Checked on the natural dev sets, never fitted on (:data:`DEV`): ExpertQA held out
(``expertqa_held_out``: rand_test less the answers also in train), WiCE held out (support
label) and the nq-open test questions 1-500 as the embedded model answered them and with
their gold answers. Never the userdev set, never a test split for
fitting.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

NAMES = {"fast": "calibrator-fast-verifier.json", "fast_short": "calibrator-fast_short-verifier.json"}
"""The shipped files (franq/data/): split claims, and short answers read whole."""
FIT_SETS = {"fast": ("expertqa-train",), "fast_short": ("nq-open-train", "nq-open-train-gold")}
"""The labelled sets each preset's calibrator is fitted on (:func:`labelled_sets`; the claims
of them that preset scored). The split-claim map reads ExpertQA's truth labels only: pooled
with WiCE fit's support labels (35% supported against 93% true) it was calibrated on neither
(experiments/2026-11-28-fast-calibrator-sets). The short-answer map reads the embedded
model's answers beside the gold answers (experiments/2026-11-28-fast-short-base-rate)."""
TRAIN = ("expertqa-train", "nq-open-train", "nq-open-train-gold", "wice-fit")
"""Every labelled training set a fast calibrator may read (the experiment compares them)."""
DEV = ("expertqa-heldout", "wice-heldout", "nq-open-test", "nq-open-test-gold")
"""The natural dev sets its calibration is reported on."""
NQ_TRAIN, NQ_TEST = 300, 500
PASSAGE_CHARS = 1_000_000
"""ExpertQA's retrieved web pages run past the default limit (100,000 characters, 102,661 in
one train answer); the recipe reads them whole, as the other fits do."""


def fast_franq(faithfulness=None):
    """The ``fast`` pipeline with no calibrator (raw P_supported), on the shipped verifier
    or the given backend."""
    from franq.config import FranqConfig
    from franq.pipeline import Franq

    config = FranqConfig.from_dict({"mode": "fast", "calibration": {"calibrator": "none"},
                                    "limits": {"passage_chars": PASSAGE_CHARS}})
    return Franq(config, None, faithfulness=faithfulness)


def _uncited(text: str) -> str:
    from franq.fit.verifier.data import CITATION_RE

    return CITATION_RE.sub("", text).strip()


def _records(path: Path, label: str, records=None) -> list[tuple[dict, list]]:
    """Each record of a franq JSONL file (or ``records``) with its given claims and their
    labels (``label``: is_true or is_faithful); ``[n]`` citation markers stripped."""
    from franq.fit.generations import read_jsonl

    out = []
    for rec in read_jsonl(path) if records is None else records:
        claims = rec.get("claims") or []
        out.append(({"question": rec["question"], "passages": rec["passages"], "answer": _uncited(rec["answer"]),
                     "claims": [_uncited(c["text"]) for c in claims]}, [c.get(label) for c in claims]))
    return out


def _nq(datasets: Path, split: str, n: int, gold: bool = False) -> list[tuple[dict, object]]:
    """The nq-open questions' short answers with their passage lists: the embedded model's
    attempted ones (labelled by normalized match), or (``gold``) each question's first gold
    answer (true)."""
    from franq.evaluation.common import attempted, is_correct
    from franq.fit.generations import short_observed
    from franq.lm.load import EMBEDDED_NAME

    rows, _ = short_observed(datasets, EMBEDDED_NAME, split, n)
    out = []
    for it, rec, _ in rows:
        if gold:
            out.append(({"question": it.question, "passages": [p.text for p in it.passages], "answer": it.answers[0]},
                        True))
            continue
        text = rec["greedy"]["text"]
        correct = is_correct(text, it.answers) if attempted(text) else None
        if correct is not None:
            out.append(({"question": it.question, "passages": [p.text for p in it.passages], "answer": text},
                        bool(correct)))
    return out


def labelled_sets(datasets: Path, names) -> dict[str, list[tuple[dict, object]]]:
    """``name -> [(record, labels)]``: ``labels`` is one label per given claim, or (nq-open:
    the answer is split by the preset, a short answer being one claim) one label for every
    claim of the answer. ``nq-open-train-gold`` / ``nq-open-test-gold``: the same questions
    with their gold answers."""
    from franq.evaluation.common import expertqa_held_out

    out = {}
    for name in names:
        if name == "expertqa-train":
            out[name] = _records(datasets / "expertqa" / "train.jsonl", "is_true")
        elif name == "expertqa-heldout":
            out[name] = _records(Path(), "is_true", expertqa_held_out(datasets))
        elif name in ("wice-fit", "wice-heldout"):
            out[name] = _records(datasets / "wice" / f"{name.split('-')[1]}.jsonl", "is_faithful")
        elif name.startswith("nq-open-") and name.removesuffix("-gold") in ("nq-open-train", "nq-open-test"):
            split, n = ("train", NQ_TRAIN) if name.startswith("nq-open-train") else ("test", NQ_TEST)
            out[name] = _nq(datasets, split, n, gold=name.endswith("-gold"))
        else:
            raise ValueError(f"unknown labelled set {name!r}; known: {list(TRAIN + DEV)}")
    return out


def scored_claims(fr, rows) -> dict[str, np.ndarray]:
    """Each scored, labelled claim of ``rows`` under ``fr``: ``p`` (raw P_supported), ``q``
    (calibrated P(true), NaN without a calibrator), ``y`` (label), ``preset`` (``fast`` or
    ``fast_short``: which calibrator reads it) and ``answer`` (the index of its row)."""
    results = fr.score_many([rec for rec, _ in rows])
    out = {"p": [], "q": [], "y": [], "preset": [], "answer": []}
    for k, ((_, labels), res) in enumerate(zip(rows, results)):
        for i, c in enumerate(res.claims):
            label = labels[i] if isinstance(labels, list) else labels
            if c.status == "scored" and label is not None:
                out["p"].append(c.p_faithful)
                out["q"].append(np.nan if c.p_true_calibrated is None else c.p_true_calibrated)
                out["y"].append(float(label))
                out["preset"].append(res.stack["mode"])
                out["answer"].append(k)
    return {k: np.array(v, dtype=object if k == "preset" else np.float64) for k, v in out.items()}


def set_arrays(datasets: Path, names, fr=None) -> dict[str, dict[str, np.ndarray]]:
    """``name -> scored_claims`` of each named set under the fast pipeline ``fr`` (default:
    :func:`fast_franq`, uncalibrated)."""
    fr = fr or fast_franq()
    return {name: scored_claims(fr, rows) for name, rows in labelled_sets(datasets, names).items()}


@functools.lru_cache(maxsize=1)
def _train(datasets: Path) -> dict[str, dict[str, np.ndarray]]:
    """The :data:`FIT_SETS` scored once per process (both files are fitted from them)."""
    return set_arrays(datasets, sorted({n for names in FIT_SETS.values() for n in names}))


def _of_preset(parts: dict[str, dict[str, np.ndarray]], preset: str) -> dict[str, dict[str, np.ndarray]]:
    """The claims of each set of ``parts`` that ``preset`` scored (sets with none left out)."""
    out = {}
    for name, a in parts.items():
        keep = a["preset"] == preset
        if keep.any():
            out[name] = {k: v[keep] for k, v in a.items()}
    return out


def _inputs(p):
    """What a fast calibrator reads of claims with P_supported ``p``: the mix with UQ_faith = 1
    and UQ_unfaith = 0, which is P_supported itself."""
    from calibration.contract import ClaimInputs

    return ClaimInputs(p, np.ones(len(p)), np.zeros(len(p)))


def fit_fast(parts: dict[str, dict[str, np.ndarray]], preset: str, stack: dict[str, str]):
    """The calibrator of ``preset`` (``fast`` or ``fast_short``): P(true) = isotonic map of
    P_supported fitted on the pooled labels of the claims of ``parts`` that preset scored."""
    from calibration.franq import FranqCalibrator

    mine = _of_preset(parts, preset)
    p = np.concatenate([a["p"] for a in mine.values()])
    y = np.concatenate([a["y"] for a in mine.values()])
    shares = ", ".join(f"{name} {len(a['y'])} claims ({a['y'].mean():.0%} true)" for name, a in mine.items())
    name = NAMES[preset]
    cal = FranqCalibrator(variant="none", calibrate_faithfulness=True, fitted_for=dict(stack), description=(
        f"{preset} preset calibrator: isotonic map of P_supported ({stack['faithfulness']}) to P(true), fitted on "
        f"{shares}; recipe: franq fit shipped {name} (franq/fit/shipped_fast.py)"))
    return cal.fit(_inputs(p), y, is_faithful=y)


def fit_inputs(datasets: Path, preset: str, n: int) -> dict[str, list[float]]:
    """The fit inputs of ``preset``'s calibrator, as :func:`fit_fast` reads them, for the first
    ``n`` records of each of its :data:`FIT_SETS` (the sample :mod:`franq.fit.shipped_inputs`
    records and checks): P_supported and the label of each claim that preset scored."""
    from franq.fit.shipped_inputs import as_record

    fr = fast_franq()
    mine = _of_preset({name: scored_claims(fr, rows[:n])
                       for name, rows in labelled_sets(datasets, FIT_SETS[preset]).items()}, preset)
    p = np.concatenate([a["p"] for a in mine.values()])
    return as_record(_inputs(p), np.concatenate([a["y"] for a in mine.values()]), uq=False)


@functools.lru_cache(maxsize=1)
def _dev(datasets: Path) -> dict[str, dict[str, np.ndarray]]:
    """The :data:`DEV` sets scored once per process (raw P_supported; both files report on them)."""
    return set_arrays(datasets, DEV)


def dev_evaluation(cal, parts: dict[str, dict[str, np.ndarray]], preset: str) -> dict:
    """The file's ``evaluation`` (issue 45.1): ECE, Brier, the constant's Brier and AUROC of
    ``cal`` (the ``preset`` file's calibrator) on the claims of each dev set of ``parts`` that
    preset scored, rounded to 4 places."""
    from franq.fit.natural import evaluation_row

    return {f"{name} (label: {'supported' if name.startswith('wice') else 'true'})":
            evaluation_row(cal.predict(_inputs(a["p"])), a["y"]) for name, a in _of_preset(parts, preset).items()}


def _write(datasets: Path, out: Path, preset: str) -> Path:
    fr = fast_franq()
    train = _train(Path(datasets).resolve())
    cal = fit_fast({name: train[name] for name in FIT_SETS[preset]}, preset, fr.preset(preset).stack)
    cal.evaluation = dev_evaluation(cal, _dev(Path(datasets).resolve()), preset)
    path = out / NAMES[preset]
    cal.to_json(path)
    return path


def fast_calibrator(datasets: Path, out: Path, raw=None) -> Path:
    """Fit and write the ``fast`` preset's calibrator (split claims; ``franq fit shipped``)."""
    return _write(datasets, out, "fast")


def fast_short_calibrator(datasets: Path, out: Path, raw=None) -> Path:
    """Fit and write the ``fast_short`` preset's calibrator (short answers; ``franq fit shipped``)."""
    return _write(datasets, out, "fast_short")


def _row(name: str, a: dict[str, np.ndarray]) -> str:
    from calibration.metrics import brier_score, expected_calibration_error
    from franq.evaluation.common import auroc

    p, q, y = a["p"], a["q"], a["y"]
    base = float(np.mean((y - y.mean()) ** 2))
    return (f"| {name} | {len(y)} | {y.mean():.3f} | {expected_calibration_error(p, y):.3f} | "
            f"{expected_calibration_error(q, y):.3f} | {brier_score(q, y):.3f} | {base:.3f} | "
            f"{auroc(q, y) if 0 < y.mean() < 1 else float('nan'):.3f} |")


def dev_table(parts: dict[str, dict[str, np.ndarray]]) -> str:
    """ECE (raw P_supported and calibrated P(true)), Brier and AUROC of the fast P(true) on
    each set of ``parts`` (scored by the calibrated fast pipeline), and on each preset's
    claims where a set has both (split claims and short answers)."""
    head = "| dev set (label) | claims | share true | ECE raw P_s | ECE calibrated | Brier | Brier of the base rate | AUROC |"
    lines = [head, "|---|---|---|---|---|---|---|---|"]
    for name, a in parts.items():
        label = "is_faithful" if name.startswith("wice") else "is_true"
        lines.append(_row(f"{name} ({label})", a))
        presets = sorted(set(a["preset"]))
        for preset in presets if len(presets) > 1 else ():
            lines.append(_row(f"... of which `{preset}` ({'short answers' if preset == 'fast_short' else 'split'})",
                              _of_preset({name: a}, preset)[name]))
    return "\n".join(lines)


def fast_fit_options(three_condition: bool | None, variant: str | None, echo) -> tuple[bool, str, bool]:
    """``franq fit calibrator`` on ``--fast`` output (no UQ term): ``(three_condition, variant,
    calibrate_faithfulness)`` of the kind of calibrator the fast mode ships, an isotonic map of
    P_supported to P(true) (binary variant ``none`` with the faithfulness map, which the caller
    fits on the truth labels, as :func:`fit_fast` does)."""
    from franq.errors import InputError

    if three_condition or variant not in (None, "none"):
        asked = "--three-condition" if three_condition else f"--variant {variant}"
        raise InputError(f"{asked}: these claims were scored by the fast mode (no UQ scorer), whose calibrator maps "
                         f"P_supported alone (variant none); leave out {asked}")
    echo("fitting the fast mode's calibrator: an isotonic map of P_supported (the claims were scored with no UQ "
         "term, as --fast scores them)")
    return False, "none", True


def calibrated_franq():
    """The ``fast`` pipeline with its shipped calibrators (what ``--fast`` runs)."""
    from franq.config import FranqConfig
    from franq.pipeline import Franq

    return Franq.from_config(FranqConfig.from_dict({"mode": "fast", "limits": {"passage_chars": PASSAGE_CHARS}}))


def evaluate_fast(datasets: Path, path: Path) -> str:
    """The dev table (:func:`dev_table`) of the shipped fast calibrators on :data:`DEV`
    (``path``: the rebuilt file; the table reads the calibrators in franq/data/)."""
    return dev_table(set_arrays(datasets, DEV, calibrated_franq()))
