"""Semantic entropy probes for short form (issue 14): fit on nq-open train, compare with
sampled semantic entropy on nq-open test (quality and time per answer); write them with --write DIR.

    franq bench se-probe [--n-train 300] [--n-test 200] [--time-n 20] [--write DIR]

Labels come from the committed short-form generations (datasets/generations/short-nq-open.*:
per question the greedy answer and 10 samples at temperature 1 with the passages): the
short preset's semantic entropy of those samples (normalized-answer equivalence, as
``franq score --mode short``), and whether the greedy answer matches a gold answer. The
labelled answers are written as the JSONL ``franq fit probe`` reads
(``benchmarks/cache/se-probe/{train,test}.jsonl``: one claim = the answer, with its
``semantic_entropy`` and ``is_true``), so ``franq fit probe benchmarks/cache/se-probe/train.jsonl
-o se.json --features hidden:16@last,hidden_closed:16@last`` refits the shipped probes.

Then, with the embedded model: the with-passages and closed-book passes over each greedy
answer (hidden states captured at ``LAYERS``; the same passes and prompt the ``probe``
preset runs), probes fitted on train (C by 5-fold CV grouped by question), and on test
the AUROC for correctness of: sampled semantic entropy (-SE), the probes' P(low SE), and
FRANQ's raw mix with each (P_f * faith + (1 - P_f) * unfaith, P_f from combined-v1 as in
the short preset). Time per answer: drawing the 10 samples (the part the probe replaces)
vs the two passes, measured side by side on ``--time-n`` test questions, one thread.
With ``--write DIR`` the best-CV probe of each pass is added to a copy of the shipped probe file in DIR.
"""
from __future__ import annotations

import datetime
import json
import platform
import time
from pathlib import Path

import numpy as np

LAYERS = (4, 8, 12, 16, 20, 24, 29)
OUT = Path("benchmarks") / "cache" / "se-probe"
"""The labelled answers and cached features, under ``--root``."""


def specs() -> list[dict]:
    out = []
    for kind in ("hidden", "hidden_closed"):
        for la in LAYERS:
            out.append({"kind": kind, "layers": [la], "pool": "last"})
        out.append({"kind": kind, "layers": [16]})  # mean over the answer's tokens, for reference
    return out


def labelled(root: Path, split: str, n: int) -> list[dict]:
    """The attempted greedy answers of the split with their semantic entropy and correctness."""
    from franq.fit.generations import datasets_dir
    from franq.fit.shipped_probes import se_rows

    return se_rows(datasets_dir(root / "datasets"), split, n)


def features(fr, rows: list[dict], name: str, out_dir: Path):
    """Per spec, the feature matrix of the rows (cached as npz), and the seconds per answer
    of the two passes."""
    from franq.io import parse_example
    from franq.fit.probe import labelled_features

    path = out_dir / f"{name}-features.npz"
    sp = specs()
    if path.exists():
        z = np.load(path)
        return [z[f"x{k}"] for k in range(len(sp))], float(z["seconds"])
    examples = [parse_example({k: v for k, v in r.items() if k != "meta"}) for r in rows]
    t = time.perf_counter()
    x, _, groups = labelled_features(fr, examples, sp, batch_size=8)
    seconds = (time.perf_counter() - t) / len(rows)
    assert len(groups) == len(rows), "every answer is one scorable claim"
    np.savez_compressed(path, seconds=seconds, **{f"x{k}": v.astype(np.float32) for k, v in enumerate(x)})
    return x, seconds


def sampling_seconds(fr, rows: list[dict], n: int) -> tuple[float, float]:
    """Seconds per answer, side by side on the same questions: drawing the short preset's
    samples (prompt prefill included), and the probe preset's two passes with capture."""
    from franq.evidence.samples import SamplingOptions, short_rag_prompt
    from franq.io import parse_example
    from franq.lm.capture import CaptureSpec

    options = SamplingOptions.from_config(fr.config.uq)
    spec = CaptureSpec(attention=False, hidden_layers=(16,), closed_hidden_layers=(16,))
    ts, tp = [], []
    for r in rows[:n]:
        ex = parse_example({k: v for k, v in r.items() if k != "meta"})
        t = time.perf_counter()
        prompt = short_rag_prompt(fr.lm, ex.question, ex.passages, options=options)
        options.draw(fr.lm, prompt.ids)
        ts.append(time.perf_counter() - t)
        t = time.perf_counter()
        fr.claim_evidence([ex], capture=spec)
        tp.append(time.perf_counter() - t)
    return float(np.median(ts)), float(np.median(tp))


def run(root: Path, *, n_train: int = 300, n_test: int = 200, time_n: int = 20, write: str | Path | None = None,
        out: str | Path | None = None, command: str = "franq bench se-probe") -> str:
    """The table, printed and written to ``out`` (default ``root/benchmarks/results/se-probe.md``);
    with ``write`` the probe file and the probe-preset calibrator go into that folder."""
    from franq.evaluation.metrics import auroc, pr_auc

    from franq.config import FranqConfig
    from franq.internals import spec_label
    from franq.pipeline import Franq
    from franq.internals.probe_file import ProbeFile, data_hash, packaged_probe_path
    from franq.fit.probe import fit_probe, target_labels
    from franq.fit.shipped_probes import SE_DATA  # the shipped probes' provenance string

    root = Path(root)
    out = Path(out) if out is not None else root / "benchmarks" / "results" / "se-probe.md"
    cache = root / OUT
    cache.mkdir(parents=True, exist_ok=True)
    data = {}
    for split, n in (("train", n_train), ("test", n_test)):
        path = cache / f"{split}.jsonl"
        if not path.exists():
            path.write_text("".join(json.dumps(r) + "\n" for r in labelled(root, split, n)), encoding="utf-8")
        data[split] = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    fr = Franq.from_config(FranqConfig.from_dict({"model": {"threads": 1}, "faithfulness": {"name": "lexical"},
                                                  "calibration": {"calibrator": "none"}}))
    xs = {s: features(fr, data[s], s, cache) for s in data}
    lab = {s: {"semantic_entropy": np.array([r["claims"][0]["semantic_entropy"] for r in data[s]])} for s in data}
    y_se, info = target_labels("low_semantic_entropy", lab["train"])
    thr = info["semantic_entropy_threshold"]
    groups = [r["id"].rsplit("-", 1)[0] for r in data["train"]]  # a question's clean and corrupted lists together
    test = data["test"]
    is_true = np.array([r["claims"][0]["is_true"] for r in test], dtype=int)
    se_test = lab["test"]["semantic_entropy"]
    low_test = (se_test < thr).astype(int)
    meta = {k: np.array([r["meta"][k] for r in test], dtype=float) for k in ("p_faithful", "uq_faith", "uq_unfaith",
                                                                           "p_true_raw")}
    fitted, rows = {}, []
    for k, spec in enumerate(specs()):
        p = fit_probe(xs["train"][0][k], y_se, groups, target="low_semantic_entropy", features=spec,
                      fitted_on={"data": SE_DATA, "data_sha256": data_hash(cache / "train.jsonl"), **info})
        fitted[spec_label(spec)] = p
        q = p.predict(xs["test"][0][k])
        rows.append((spec_label(spec), p.cv["auroc"], auroc(q, low_test), auroc(q, is_true),
                     pr_auc(q - 1, is_true)))  # AP of false answers by 1 - q
    best = {kind: max((r for r in rows if r[0].split(":")[0] == kind), key=lambda r: r[1]) for kind in
            ("hidden", "hidden_closed")}
    pr, pc = fitted[best["hidden"][0]], fitted[best["hidden_closed"][0]]
    ks = {spec_label(s): k for k, s in enumerate(specs())}
    q_rag = pr.predict(xs["test"][0][ks[best["hidden"][0]]])
    q_closed = pc.predict(xs["test"][0][ks[best["hidden_closed"][0]]])
    pf = meta["p_faithful"]
    # a condition calibrator for the probe preset, fitted on train with out-of-fold probe outputs
    from calibration.contract import ClaimInputs
    from calibration.franq import FranqCalibrator
    from franq.calibrate import stack_key
    from franq.evaluation.benchmark import slug
    from franq.lm.load import EMBEDDED_NAME
    from franq.fit.probe import cross_validate

    _, oof_r = cross_validate(xs["train"][0][ks[best["hidden"][0]]], y_se, groups, c_grid=(pr.cv["C"],))
    _, oof_c = cross_validate(xs["train"][0][ks[best["hidden_closed"][0]]], y_se, groups, c_grid=(pc.cv["C"],))
    pf_tr = np.array([r["meta"]["p_faithful"] for r in data["train"]], dtype=float)
    true_tr = np.array([r["claims"][0]["is_true"] for r in data["train"]], dtype=int)
    stack = stack_key(model=EMBEDDED_NAME, faithfulness="combined-v1", uq_faith="se_probe",
                      uq_unfaith="se_probe_closed", mode="probe")
    cal = FranqCalibrator(variant="condition", fitted_for=stack, description=(
        f"probe-preset calibrator: fitted by franq bench se-probe on {len(true_tr)} nq-open train answers "
        "(out-of-fold semantic entropy probe outputs; labels: normalized match of the greedy answer)"))
    cal.fit(ClaimInputs(pf_tr, oof_r, oof_c), true_tr)
    p_cal = cal.predict(ClaimInputs(pf, q_rag, q_closed))
    t_sample, t_pass = sampling_seconds(fr, test, time_n)

    def auc(v):
        return f"{auroc(v, is_true):.3f}", f"{pr_auc(v - 1, is_true):.3f}"

    se_auc = auroc(-se_test, is_true)
    probe_auc = auroc(q_rag, is_true)
    lines = [
        "# Semantic entropy probes vs sampled semantic entropy (short form, nq-open)", "",
        f"Command: `{command}`  ",
        f"Date: {datetime.date.today()}  ",
        f"Machine: {platform.machine()}, 1 torch thread, CPU, shared with other jobs (ratios measured side by side)  ",
        f"Model: {fr.lm.name}; samples: the committed generations (10 at temperature 1 with the passages, "
        "normalized-answer equivalence)", "",
        f"Train: {len(data['train'])} attempted greedy answers of the first {n_train} nq-open train questions "
        f"(clean and corrupted passage lists); test: {len(test)} attempted answers of the first {n_test} test "
        f"questions (clean lists), {int(is_true.sum())} correct. Semantic entropy split at {thr:.3f} nats (the "
        f"threshold with the least within-group squared deviation on train; {y_se.mean():.0%} of train answers "
        f"and {low_test.mean():.0%} of test answers below it).", "",
        "## Probes per layer (P(low SE); C by 5-fold CV on train, grouped by question)", "",
        "| features | train CV AUROC (low SE) | test AUROC (low SE) | test AUROC (correct) | test PR-AUC (wrong) |",
        "|---|---|---|---|---|",
        *[f"| {n} | {cv:.3f} | {a:.3f} | {b:.3f} | {c:.3f} |" for n, cv, a, b, c in rows], "",
        f"Chosen by train CV: {best['hidden'][0]} (with passages), {best['hidden_closed'][0]} (closed book).", "",
        "## Correctness of the greedy answer on test", "",
        "| signal | AUROC (correct) | PR-AUC (wrong) | s / answer |", "|---|---|---|---|",
        f"| sampled semantic entropy, -SE (10 samples) | {auc(-se_test)[0]} | {auc(-se_test)[1]} | {t_sample:.3f} (sampling) |",
        f"| SE probe, with passages: P(low SE) | {auc(q_rag)[0]} | {auc(q_rag)[1]} | {t_pass:.3f} (two passes) |",
        f"| SE probe, closed book: P(low SE) | {auc(q_closed)[0]} | {auc(q_closed)[1]} | (same passes) |",
        f"| FRANQ short (in-policy), raw mix: SE / eigval | {auc(meta['p_true_raw'])[0]} | {auc(meta['p_true_raw'])[1]} | sampling |",
        f"| FRANQ probe preset, raw mix: P_f * probe + (1 - P_f) * closed probe | {auc(pf * q_rag + (1 - pf) * q_closed)[0]} | "
        f"{auc(pf * q_rag + (1 - pf) * q_closed)[1]} | two passes |",
        f"| FRANQ probe preset, condition-calibrated (fitted on train) | {auc(p_cal)[0]} | {auc(p_cal)[1]} | two passes |",
        f"| P_faithful alone (combined-v1) | {auc(pf)[0]} | {auc(pf)[1]} | - |", "",
        f"Target: the probe reaches >= 90% of sampled SE's AUROC at >= 5x less time per answer. Measured: "
        f"{probe_auc / se_auc:.0%} of the AUROC ({probe_auc:.3f} vs {se_auc:.3f}) at {t_sample / t_pass:.1f}x less "
        f"time (median over {time_n} test questions: {t_sample:.3f} s of sampling vs {t_pass:.3f} s for the "
        f"two passes; the probe's own arithmetic is microseconds). Passes in the fitting run: "
        f"{xs['test'][1]:.3f} s / answer (batched, 15 hidden-state layers captured).", ""]
    table = "\n".join(lines)
    print(table)
    out.write_text(table + "\n", encoding="utf-8")
    if write:
        shipped = ProbeFile.load(packaged_probe_path(fr.lm.name))
        keep = tuple(p for p in shipped.probes if p.target != "low_semantic_entropy")
        folder = Path(write)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / packaged_probe_path(fr.lm.name).name
        ProbeFile(shipped.model, keep + (pr, pc)).save(path)
        cal_path = folder / f"calibrator-probe-{slug(EMBEDDED_NAME)}-combined-v1.json"
        cal.to_json(cal_path)
        print(f"wrote {path} and {cal_path}")
    return table
