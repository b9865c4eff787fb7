"""Faithfulness and truth signals from the pass's internals, on held-apart data; fits the
shipped probe file.

    franq bench internals --out benchmarks/results/internals-faithfulness.md

Reads the caches of ``franq bench internals-data`` (one with-passages pass with capture per
answer, embedded model) for ExpertQA train (fitting), ExpertQA test and the WiCE held-apart
split (evaluation). Probes are fitted on ExpertQA train claims only (C by 5-fold CV grouped
by answer, :func:`franq.fit.probe.fit_probe`); with ``--write-probes PATH`` they are written to
PATH (``franq fit shipped`` rebuilds the shipped ``franq/data/probe-<model>.json``). Faithful = support Complete (ExpertQA) / supported (WiCE).

Rows: the text backends (lexical-v1, the shipped combined-v1) on every labelled claim and on
the claims with a cached pass; context PMI from the committed long-form snapshot
(datasets/generations, its closed-book pass); lookback and hidden-state probes; and their
combination (a logistic regression over combined-v1's text features and the two probes'
logits, fitted on train with out-of-fold probe outputs). ms/claim: wall clock of the
backend's own work; for the probes, the probe itself plus the capture overhead per claim
measured by ``scripts/bench_capture.py`` (the pass is FRANQ's own and is not counted).
"""
from __future__ import annotations

import datetime
import gzip
import json
import platform
import re
import time
from pathlib import Path

import numpy as np

import franq.evaluation.metrics as em
from franq.evaluation.internals_cache import LAYERS, cache_dir
from franq.faithfulness.combined import CombinedFaithfulness
from franq.fit.faithfulness_map import load_claims
from franq.faithfulness.features import feature_matrix, pass_features_from_sums
from franq.faithfulness.lexical import LexicalFaithfulness
from franq.lm.load import EMBEDDED_NAME
from franq.internals.probe_file import ProbeFile, packaged_probe_path
from franq.fit.probe import cross_validate, fit_probe
from franq.scorers.rauq import middle_layers, token_confidences

EXPERTQA = Path("datasets/expertqa")
WICE = Path("datasets/wice")
"""Both under ``--root``."""


def load_cache(root: Path, dataset: Path) -> dict[tuple[str, int], dict]:
    """Per (answer id, claim index): the cached features of a scored labelled claim."""
    out = {}
    for path in sorted(cache_dir(root, dataset).glob("*.npz")):
        z = np.load(path)
        if not len(z["index"]):
            continue
        splits = np.cumsum(z["n_tokens"])[:-1]
        c = token_confidences(z["token_logprobs"], z["prev_attn"].astype(np.float32))
        logc = np.log(np.maximum(c[:, middle_layers(c.shape[1])], 1e-300))
        for k, (i, pos) in enumerate(zip(z["index"], np.split(z["positions"], splits))):
            nocite = "lookback_nocite" in z
            out[(path.stem, int(i))] = {"lookback": z["lookback"][k], "hidden": z["hidden"][k].astype(np.float32),
                                        "hidden_closed": (z["hidden_closed"][k].astype(np.float32)
                                                          if "hidden_closed" in z else None),
                                        "lookback_nocite": z["lookback_nocite"][k] if nocite else None,
                                        "hidden_nocite": z["hidden_nocite"][k].astype(np.float32) if nocite else None,
                                        "log_rag": float(z["log_rag"][k]), "n_tokens": int(z["n_tokens"][k]),
                                        "log_closed": float(z["log_closed"][k]) if "log_closed" in z else None,
                                        "rauq": float((-logc[pos].mean(0)).max())}
    return out


def generations_pmi(root: Path) -> dict[tuple[str, int], dict]:
    """Per (answer id, claim index): context-PMI features from the committed snapshot."""
    from franq.calibrate import stack_key
    from franq.evaluation.observe import long_key

    stack = stack_key(model=EMBEDDED_NAME, faithfulness="combined-v1", uq_faith="claim_prob",
                      uq_unfaith="parametric", mode="long")
    snap = root / "datasets/generations/long-expertqa.embedded-SmolLM2-135M-Instruct.Q4-1.combined-v1.jsonl.gz"
    recs = {json.loads(line)["id"]: json.loads(line) for line in gzip.open(snap, "rt", encoding="utf-8")}
    out = {}
    for split in ("train", "test"):
        for line in open(root / EXPERTQA / f"{split}.jsonl", encoding="utf-8"):
            rid = json.loads(line)["id"]
            obs = recs.get(long_key(rid, stack))
            for i, c in enumerate(obs["claims"] if obs else []):
                s = c.get("signals") or c.get("components") or {}
                if c["status"] == "scored" and "log_parametric" in s:
                    out[(rid, i)] = pass_features_from_sums(s["log_claim_prob"], s["log_parametric"], s["n_tokens"]) | {
                        "log_parametric": s["log_parametric"]}
    return out


def metrics(p, y) -> tuple[float, float]:
    """AUROC and PR-AUC (average precision) of ``p`` for the faithful claims (y = 1)."""
    return em.auroc(p, y), em.pr_auc(-np.asarray(p, float), 1 - np.asarray(y))


CITED = re.compile(r"\[\d+\]")


def row(name, p, y, cited, ms=None, note="") -> str:
    """AUROC and PR-AUC on all claims, and AUROC among the claims that carry a ``[n]``
    marker: in ExpertQA every claim without one is unsupported (support Missing), so a
    marker alone reaches AUROC .73; among cited claims that cue is gone."""
    p, y, cited = np.asarray(p, float), np.asarray(y, int), np.asarray(cited, bool)
    auroc, prauc = metrics(p, y)
    among = f"{em.auroc(p[cited], y[cited]):.3f} ({cited.sum()})" if len(set(y[cited].tolist())) == 2 else "-"
    return (f"| {name} | {len(y)} | {auroc:.3f} | {prauc:.3f} | {among} | {'-' if ms is None else f'{ms:.2f}'} "
            f"| {note} |")


def logit(p):
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return np.log(p / (1 - p))


def timed(fn, n):
    t = time.perf_counter()
    out = fn()
    return out, 1000 * (time.perf_counter() - t) / max(n, 1)


def run(root: Path, *, write_probes: str | Path | None = None, capture_ms: float | None = None,
        no_wice_fit: bool = False, out: str | Path | None = None, command: str = "franq bench internals") -> str:
    """The report, printed and written to ``out`` when given."""
    from franq.internals.probe_file import data_hash

    root = Path(root)
    expertqa, wice = root / EXPERTQA, root / WICE

    train_claims = load_claims(expertqa / "train.jsonl")
    train_cache = load_cache(root, expertqa / "train.jsonl")
    tr = [c for c in train_claims if (c.answer_id, c.index) in train_cache]
    feats = [train_cache[(c.answer_id, c.index)] for c in tr]
    n_expertqa = len(tr)
    sources = [f"ExpertQA train (datasets/expertqa/train.jsonl, sha256 {data_hash(expertqa / 'train.jsonl')[:12]})"]
    if not no_wice_fit:
        wice_cache = load_cache(root, wice / "fit.jsonl")
        wf = [c for c in load_claims(wice / "fit.jsonl") if (c.answer_id, c.index) in wice_cache]
        if wf:
            tr += wf
            feats += [wice_cache[(c.answer_id, c.index)] for c in wf]
            sources.append(f"WiCE fit (datasets/wice/fit.jsonl, sha256 {data_hash(wice / 'fit.jsonl')[:12]})")
    y_tr = np.array([c.is_faithful for c in tr], int)
    g_tr = [c.answer_id for c in tr]
    lines = [f"Probes fitted on {len(tr)} claims of {len(set(g_tr))} answers with a cached pass: {n_expertqa} "
             f"ExpertQA train claims and {len(tr) - n_expertqa} WiCE fit claims ({y_tr.mean():.1%} faithful); "
             f"C by 5-fold CV grouped by answer.", "",
             "| probe (train CV) | claims | CV AUROC | CV PR-AUC | C |", "|---|---|---|---|---|"]
    fitted_on = {"data": " + ".join(sources) + ", claims with a cached pass", "n_answers": len(set(g_tr)),
                 "data_sha256": data_hash(expertqa / "train.jsonl")}
    if len(sources) > 1:
        fitted_on["data_sha256_wice_fit"] = data_hash(wice / "fit.jsonl")
    x_look = np.stack([f["lookback"] for f in feats])
    look = fit_probe(x_look, y_tr, g_tr, target="is_faithful", features={"kind": "lookback"}, fitted_on=fitted_on)
    lines.append(f"| lookback (270 = 30 layers x 9 heads) | {len(tr)} | {look.cv['auroc']:.3f} | "
                 f"{look.cv['pr_auc']:.3f} | {look.cv['C']:g} |")
    best = None
    for j, layer in enumerate(LAYERS):
        cv, _ = cross_validate(np.stack([f["hidden"][j] for f in feats]), y_tr, g_tr)
        lines.append(f"| hidden layer {layer} (576) | {len(tr)} | {cv['auroc']:.3f} | {cv['pr_auc']:.3f} | {cv['C']:g} |")
        if best is None or cv["auroc"] > best[1]:
            best = (j, cv["auroc"])
    j_best = best[0]
    x_hid = np.stack([f["hidden"][j_best] for f in feats])
    hid = fit_probe(x_hid, y_tr, g_tr, target="is_faithful", features={"kind": "hidden", "layers": [LAYERS[j_best]]},
                    fitted_on=fitted_on)
    probes = [look, hid]
    diff = None
    if all(f["hidden_closed"] is not None for f in feats):
        best_d = None
        for j, layer in enumerate(LAYERS):
            cv, _ = cross_validate(np.stack([f["hidden"][j] - f["hidden_closed"][j] for f in feats]), y_tr, g_tr)
            lines.append(f"| hidden_diff layer {layer} (with - without passages) | {len(tr)} | {cv['auroc']:.3f} | "
                         f"{cv['pr_auc']:.3f} | {cv['C']:g} |")
            if best_d is None or cv["auroc"] > best_d[1]:
                best_d = (j, cv["auroc"])
        jd = best_d[0]
        diff = (jd, fit_probe(np.stack([f["hidden"][jd] - f["hidden_closed"][jd] for f in feats]), y_tr, g_tr,
                              target="is_faithful", features={"kind": "hidden_diff", "layers": [LAYERS[jd]]},
                              fitted_on=fitted_on))
        probes.append(diff[1])
    truth = [(c, f) for c, f in zip(tr, feats) if train_label(root, c, "is_true") is not None]
    yt = np.array([train_label(root, c, "is_true") for c, _ in truth], int)
    if len(truth) and min(np.bincount(yt, minlength=2)) >= 5:
        tprobe = fit_probe(np.stack([f["hidden"][j_best] for _, f in truth]), yt, [c.answer_id for c, _ in truth],
                           target="is_true", features={"kind": "hidden", "layers": [LAYERS[j_best]]}, fitted_on=fitted_on)
        probes.append(tprobe)
        lines.append(f"| truth: hidden layer {LAYERS[j_best]} on is_true | {len(yt)} | {tprobe.cv['auroc']:.3f} | "
                     f"{tprobe.cv['pr_auc']:.3f} | {tprobe.cv['C']:g} |")
        if diff is not None:
            tdiff = fit_probe(np.stack([f["hidden"][diff[0]] - f["hidden_closed"][diff[0]] for _, f in truth]), yt,
                              [c.answer_id for c, _ in truth], target="is_true",
                              features={"kind": "hidden_diff", "layers": [LAYERS[diff[0]]]}, fitted_on=fitted_on)
            probes.append(tdiff)
            lines.append(f"| truth: hidden_diff layer {LAYERS[diff[0]]} on is_true | {len(yt)} | "
                         f"{tdiff.cv['auroc']:.3f} | {tdiff.cv['pr_auc']:.3f} | {tdiff.cv['C']:g} |")
    if write_probes:
        shipped = packaged_probe_path(EMBEDDED_NAME)
        kept = tuple(p for p in ProbeFile.load(shipped).probes if p.target == "low_semantic_entropy") \
            if shipped.exists() else ()
        path = Path(write_probes)
        ProbeFile(EMBEDDED_NAME, tuple(probes) + kept).save(path)  # the short-form SE probes stay
        lines += ["", f"Wrote {path}."]

    # the combination: text features + the probes' logits, stacked on out-of-fold probe outputs
    combined = CombinedFaithfulness()
    text_names = combined.map.features
    _, oof_look = cross_validate(x_look, y_tr, g_tr, c_grid=(look.cv["C"],))
    _, oof_hid = cross_validate(x_hid, y_tr, g_tr, c_grid=(hid.cv["C"],))
    from franq.faithfulness.logistic import LogisticMap

    stack_names = (*text_names, "lookback_logit", "hidden_logit")
    x_stack = np.column_stack([feature_matrix(text_names, [(c.context, c.claim) for c in tr], None),
                               logit(oof_look), logit(oof_hid)])
    stacker = LogisticMap.fit(x_stack, y_tr, stack_names)

    nocite_probes = None
    tr_n = [k for k, f in enumerate(feats) if f["lookback_nocite"] is not None]
    if len(tr_n) >= 50:
        gn = [g_tr[k] for k in tr_n]
        nocite_probes = (
            fit_probe(np.stack([feats[k]["lookback_nocite"] for k in tr_n]), y_tr[tr_n], gn, target="is_faithful",
                      features={"kind": "lookback"}, fitted_on=fitted_on),
            fit_probe(np.stack([feats[k]["hidden_nocite"][j_best] for k in tr_n]), y_tr[tr_n], gn,
                      target="is_faithful", features={"kind": "hidden", "layers": [LAYERS[j_best]]}, fitted_on=fitted_on))
    pmi = generations_pmi(root)
    sections = []
    for title, dataset in (("ExpertQA test (rand_test), support = Complete", expertqa / "test.jsonl"),
                           ("WiCE held-apart split, supported vs partially / not supported", wice / "heldout.jsonl")):
        claims = load_claims(dataset)
        cache = load_cache(root, dataset)
        pairs = [(c.context, c.claim) for c in claims]
        y = np.array([c.is_faithful for c in claims], int)
        cited = np.array([bool(CITED.search(c.claim)) for c in claims])
        out = [f"### {title}", "", "| backend | claims | AUROC | PR-AUC | AUROC among cited claims (n) | ms/claim | note |",
               "|---|---|---|---|---|---|---|"]
        lex, ms_lex = timed(lambda: LexicalFaithfulness().predict(pairs), len(pairs))
        comb, ms_comb = timed(lambda: combined.predict(pairs), len(pairs))
        out.append(row("lexical-v1", lex, y, cited, ms_lex, "all labelled claims"))
        out.append(row(combined.name, comb, y, cited, ms_comb, "all labelled claims"))
        out.append(row("(diagnostic) the claim carries a [n] marker", cited, y, cited, None, "dataset artefact"))
        sub = [k for k, c in enumerate(claims) if (c.answer_id, c.index) in cache]
        if len(sub) >= 20 and len(set(y[sub].tolist())) == 2:
            ys, cs = y[sub], cited[sub]
            f = [cache[(claims[k].answer_id, claims[k].index)] for k in sub]
            n_ans = len({claims[k].answer_id for k in sub})
            out.append(f"| *claims with a cached pass: {n_ans} answers* | | | | | | |")
            out.append(row("lexical-v1", lex[sub], ys, cs))
            out.append(row(combined.name, comb[sub], ys, cs))
            xl = np.stack([v["lookback"] for v in f])
            xh = np.stack([v["hidden"][j_best] for v in f])
            p_look, ms_look = timed(lambda: look.predict(xl), len(sub))
            p_hid, ms_hid = timed(lambda: hid.predict(xh), len(sub))
            extra = capture_ms or 0.0
            note = ("+ capture overhead" if capture_ms is not None else
                    "the probe; capture adds no measurable time to the pass (benchmarks/results/cost-faithfulness-probe.md)")
            out.append(row("lookback-v1 (Lookback Lens probe)", p_look, ys, cs, ms_look + extra, note))
            out.append(row(f"probe-v1 (hidden layer {LAYERS[j_best]})", p_hid, ys, cs, ms_hid + extra, note))
            if diff is not None and all(v["hidden_closed"] is not None for v in f):
                xd = np.stack([v["hidden"][diff[0]] - v["hidden_closed"][diff[0]] for v in f])
                out.append(row(f"probe on hidden_diff layer {LAYERS[diff[0]]} (needs the closed-book pass)",
                               diff[1].predict(xd), ys, cs, None, "with - without passages"))
            xs = np.column_stack([feature_matrix(text_names, [pairs[k] for k in sub], None), logit(p_look), logit(p_hid)])
            out.append(row("combination: combined-v1 features + lookback + probe", stacker.predict(xs), ys, cs, None,
                           "stacked on train"))
            if all(v["log_closed"] is not None for v in f):
                from franq.faithfulness.context_pmi import ContextPMIFaithfulness

                x_pmi = np.array([[pass_features_from_sums(v["log_rag"], v["log_closed"], v["n_tokens"])["pmi_mean"]]
                                  for v in f])
                out.append(row("context-pmi-v1 (the cached two passes)", ContextPMIFaithfulness().map.predict(x_pmi),
                               ys, cs, None, "mean token PMI, with / without passages"))
            out.append(row("(unsupervised) RAUQ confidence exp(-u)", np.exp(-np.array([v["rauq"] for v in f])), ys, cs,
                           None, "a truth signal, shown for reference"))
            both = [k for k, v in enumerate(f) if v["lookback_nocite"] is not None]
            if nocite_probes is not None and len(both) >= 20 and len(set(ys[both].tolist())) == 2:
                nl, nh = nocite_probes
                out.append(row("lookback, pooled without [n] tokens", nl.predict(np.stack([f[k]["lookback_nocite"] for k in both])),
                               ys[both], cs[both], None, f"fitted the same way; {len(both)} claims"))
                out.append(row(f"probe (hidden {LAYERS[j_best]}), pooled without [n] tokens",
                               nh.predict(np.stack([f[k]["hidden_nocite"][j_best] for k in both])), ys[both], cs[both],
                               None, f"fitted the same way; {len(both)} claims"))
            have = [k for k in sub if (claims[k].answer_id, claims[k].index) in pmi]
            if len(have) >= 20 and len(set(y[have].tolist())) == 2:
                out.append(row("context PMI, raw (claims in the snapshot)",
                               [pmi[(claims[k].answer_id, claims[k].index)]["pmi_mean"] for k in have], y[have],
                               cited[have], None, "needs the closed-book pass"))
        else:
            out.append(f"| *no cached passes for {dataset.name} (run franq bench internals-data)* | | | | | | |")
        sections += [*out, ""]
    sections += truth_section(root, pmi, probes, j_best, diff[0] if diff else None)
    report = "\n".join([
        f"Run {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on {platform.node()} "
        "(2-core CPU shared with other developers' jobs; timings are noisy).",
        f"Command: `{command}`", "", *lines, "", *sections])
    print(report)
    if out:
        Path(out).write_text(report + "\n", encoding="utf-8")
    return report


def truth_section(root: Path, pmi, probes, j_best, j_diff=None) -> list[str]:
    """ExpertQA test claims with an is_true label and a cached pass: the unsupervised RAUQ
    and the truth probe against FRANQ's own long-form UQ signals (false = the positive class
    of PR-AUC, as in the long-form table)."""
    cache = load_cache(root, root / EXPERTQA / "test.jsonl")
    rows = []
    for line in open(root / EXPERTQA / "test.jsonl", encoding="utf-8"):
        rec = json.loads(line)
        for i, c in enumerate(rec["claims"]):
            if c.get("is_true") is not None and (rec["id"], i) in cache:
                rows.append((rec["id"], i, int(c["is_true"])))
    y = np.array([r[2] for r in rows])
    out = ["### Truth (ExpertQA test, is_true; claims with a cached pass)", ""]
    if len(rows) < 20 or len(set(y.tolist())) < 2:
        return out + [f"Too few labelled claims with a cached pass ({len(rows)}).", ""]
    f = [cache[(a, i)] for a, i, _ in rows]
    signals = {"Max Claim Prob. (log p(c|x,r))": np.array([v["log_rag"] for v in f]),
               "RAUQ confidence exp(-u) (unsupervised)": np.exp(-np.array([v["rauq"] for v in f]))}
    truth = {p.features["kind"]: p for p in probes if p.target == "is_true"}
    if "hidden" in truth:
        signals[f"truth probe (hidden layer {LAYERS[j_best]})"] = truth["hidden"].predict(
            np.stack([v["hidden"][j_best] for v in f]))
    if "hidden_diff" in truth and all(v["hidden_closed"] is not None for v in f):
        signals[f"truth probe (hidden_diff layer {LAYERS[j_diff]})"] = truth["hidden_diff"].predict(
            np.stack([v["hidden"][j_diff] - v["hidden_closed"][j_diff] for v in f]))
    have = [k for k, (a, i, _) in enumerate(rows) if (a, i) in pmi]
    out += [f"{len(rows)} claims of {len({a for a, _, _ in rows})} answers, {int((y == 0).sum())} false.", "",
            "| signal | AUROC (true) | PR-AUC (false) |", "|---|---|---|"]
    for name, v in signals.items():
        out.append(f"| {name} | {em.auroc(v, y):.3f} | {em.pr_auc(v, y):.3f} |")
    if len(have) == len(rows):
        v = np.array([pmi[(a, i)]["log_parametric"] for a, i, _ in rows])
        out.append(f"| Parametric Knowledge (log p(c|x)) | {em.auroc(v, y):.3f} | {em.pr_auc(v, y):.3f} |")
    return out + [""]


_LABELS: dict = {}


def train_label(root: Path, claim, key):
    """A train claim's other label (load_claims keeps only is_faithful)."""
    if not _LABELS:
        for line in open(root / EXPERTQA / "train.jsonl", encoding="utf-8"):
            rec = json.loads(line)
            for i, c in enumerate(rec["claims"]):
                _LABELS[(rec["id"], i)] = c
    return _LABELS.get((claim.answer_id, claim.index), {}).get(key)  # WiCE fit claims: no is_true

