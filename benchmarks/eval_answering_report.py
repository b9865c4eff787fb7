"""Tables for benchmarks/eval_answering.py: ``report(args)`` reads the caches, computes every
table with bootstrap 95% intervals, draws the selective-accuracy curves and writes
benchmarks/results/answering.md and the results block of docs/answering.md.
(A script, not a `franq bench` command: it evaluates the answering app, franq.apps, which the workbench may not import.)"""
from __future__ import annotations

import datetime
import json
import shlex
import sys
from pathlib import Path

import numpy as np

from eval_answering import CACHE, ROOT, SNAPSHOT, _snapshot, autorater_key, eval_items, observe_key, short_records

from franq.apps.answering import decision_metrics as M
from franq.evaluation.metrics import bootstrap

RESULTS = ROOT / "benchmarks" / "results"
DOC = ROOT / "docs" / "answering.md"
BEGIN, END = "<!-- eval_answering.py report: begin -->", "<!-- eval_answering.py report: end -->"
PNG = "answering-selective.png"
COVERAGE = 0.5
SWITCH = 0.2


def _read(path: Path) -> dict:
    out = {}
    if path.exists():
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.endswith("\n"):
                    r = json.loads(line)
                    out[r["id"]] = r
    return out


def load(limit: int | None):
    """One row per question that has every pass: labels and raw signals."""
    from franq.apps.answering import ContainsGoldSufficiency, NLIGoldSufficiency, NLICheck, QAItem
    from franq.evaluation.observe import short_key
    from franq.evaluation.units import attempted, is_correct
    from franq.evidence.samples import SamplingOptions
    from franq.faithfulness.combined import CombinedFaithfulness
    from franq.lm.labels import pair_probability

    known = _snapshot()
    obs = known | _read(CACHE / "observe.jsonl")
    auto = known | _read(CACHE / "autorater.jsonl")
    short = short_records()
    options = SamplingOptions(max_new_tokens=16)
    rows, items = [], []
    for split, it in eval_items()[:limit]:
        o = obs.get(observe_key(it))
        if o is None:
            continue
        rec = short[short_key(it.id, it.passage_ids, options)]
        g = rec["greedy"]
        answer = g["text"]
        a = auto.get(autorater_key(it))
        row = {"id": it.id, "split": split, "question": it.question, "answers": list(it.answers),
               "sufficient": int(not it.corrupted), "answer": answer, "attempted": int(attempted(answer)),
               "correct": int(attempted(answer) and is_correct(answer, it.answers)),
               "closed_answer": o["closed_answer"], "closed_attempted": int(attempted(o["closed_answer"])),
               "closed_correct": int(attempted(o["closed_answer"]) and is_correct(o["closed_answer"], it.answers)),
               "pre_answer": o["pre_answer"], "suff_label": o["suff_label"],
               "nli_judge": None if "nli_judge" not in o else (o["nli_judge"] if o["nli_judge"] is not None else 0.0),
               "suff_label_verbatim": o.get("suff_label_verbatim"),
               "autorater": None if a is None else a["autorater"],
               "self_p_true": float(pair_probability(*rec["p_true_logprobs"])) if "p_true_logprobs" in rec else 0.5,
               "dual": (float(np.mean(g["token_logprobs"])) if g["token_logprobs"] else -20.0)
               - (float(np.mean(o["closed_token_logprobs"])) if o["closed_token_logprobs"] else -20.0),
               "seconds": o.get("seconds")}
        row["V"] = row["correct"] * row["sufficient"]
        rows.append(row)
        items.append((it, rec))
    qa = [QAItem(it.question, it.passages, answer=r["answer"] or "-", gold_answers=it.answers)
          for (it, _), r in zip(items, rows)]
    combined = CombinedFaithfulness()
    nli = NLICheck(combined).predict(qa)
    gold = ContainsGoldSufficiency().rate(qa)
    gold_nli = NLIGoldSufficiency(combined).rate(qa)
    franq_p, franq_f = franq_p_true(items)
    for k, r in enumerate(rows):
        r.update(nli=float(nli[k]), contains_gold=int(gold[k]), nli_gold=float(gold_nli[k]),
                 p_true=franq_p[k], p_faithful=franq_f[k])
    return rows


def franq_p_true(items) -> tuple[list[float], list[float]]:
    """FRANQ's short-form P(true) and P_faithful (raw: the shipped short calibrator was
    fitted on train questions 1-300, which this pool contains) from the cached samples, no
    model pass."""
    from franq.config import FranqConfig
    from franq.io import Example
    from franq.evaluation.observe import cached_sample_set
    from franq.pipeline import Franq

    class Named:
        name = "embedded:SmolLM2-135M-Instruct.Q4_1"

    cfg = FranqConfig.from_dict({"mode": "short", "calibration": {"calibrator": "none"}})
    fq = Franq(cfg, Named())
    examples = [Example(it.question, it.passages, rec["greedy"]["text"] or "-") for it, rec in items]
    sets = [cached_sample_set(rec) for _, rec in items]
    scores = fq.score_many(examples, sample_sets=sets, generated=True)  # the model's own greedy answers
    return [float(s.claims[0].p_true_raw) for s in scores], [float(s.claims[0].p_faithful) for s in scores]


def ci(point_lo_hi, pct=True) -> str:
    p, lo, hi = point_lo_hi
    f = 100 if pct else 1
    return f"{p * f:.1f} [{lo * f:.1f}, {hi * f:.1f}]" if pct else f"{p:.3f} [{lo:.3f}, {hi:.3f}]"


PREDICTORS = [("Trivial (always v = 1)", None), ("Pre-Answering (P(yes), embedded)", "pre_answer"),
              ("Post-Answering NLI (combined backend)", "nli"),
              ("Post-Answering NLI (prompt-based, embedded judge)", "nli_judge"),
              ("Dual Generation (mean log-prob, RAG - closed)", "dual"),
              ("FRANQ P(true) (short form, raw)", "p_true"), ("Self-rated P(True) (embedded)", "self_p_true")]


def col(rows, name):
    return np.array([r[name] for r in rows], dtype=np.float64)


def report(args) -> None:
    rows = load(args.limit)
    n = len(rows)
    if n < 10:
        sys.exit(f"only {n} questions have every pass; run `observe` first")
    B = args.n_boot
    FULL = [(label, name) for label, name in PREDICTORS[1:] if all(r[name] is not None for r in rows)]
    V, S, ok, cb = (col(rows, k) for k in ("V", "sufficient", "correct", "closed_correct"))
    att, catt = col(rows, "attempted"), col(rows, "closed_attempted")
    out = [f"N = {n} nq-open questions, a random sample (seeded shuffle) of the pool of 500 (train 1-300, "
           f"test 1-200) whose passage lists are 82% answerable: {S.mean():.0%} of these N have the gold "
           f"passage; RAG accuracy {ok.mean():.1%}, closed-book "
           f"{cb.mean():.1%}; V = 1 for {int(V.sum())} answers. Bootstrap 95% intervals, {B} resamples.", ""]

    # ---- 000 Table 2 / 6 / 7
    out += ["### AwF: max F1 and PR-AUC per predictor (paper 000 Tables 2, 6, 7; 0-100)", "",
            "| predictor | n | AwF max F1 | AwF PR-AUC | SfC max F1 | SfC PR-AUC |", "|---|---|---|---|---|---|"]
    for label, name in PREDICTORS:
        m = np.array([name is None or r[name] is not None for r in rows])
        s = np.ones(n)[m] if name is None else col([r for r, k in zip(rows, m) if k], name)
        v, sf = V[m], S[m]
        cells = [ci(bootstrap(M.max_f1, s, v, sf, n_boot=B)), ci(bootstrap(M.pr_auc, s, v, sf, n_boot=B)),
                 ci(bootstrap(M.max_f1, s, sf, sf, n_boot=B)), ci(bootstrap(M.pr_auc, s, sf, sf, n_boot=B))]
        out.append(f"| {label} | {int(m.sum())} | " + " | ".join(cells) + " |")
    c = M.awf_counts(np.ones(n), V, S)
    out += ["", f"Trivial: AwF-Precision {c.precision:.3f}, AwF-Recall {c.recall:.3f} (True-Pos {c.true_pos}, "
                f"F-Answerable {c.f_answerable}); the recall ceiling of every predictor is the answering recall "
                f"Faithful / F-Answerable = {c.faithful}/{c.f_answerable}.", ""]

    # ---- 000 Table 3 / 8: no-RAG fallback with 5-fold CV
    from franq.apps.answering import ThresholdPolicy

    out += ["### No-RAG fallback: accuracy gain with a 5-fold CV threshold (paper 000 Tables 3, 8; points)", "",
            "| predictor | CV gain, all | gain, sufficient | gain, insufficient | CV fallback rate |",
            "|---|---|---|---|---|"]
    for label, name in FULL:
        s = col(rows, name)
        pol = ThresholdPolicy.fit(s, ok, cb, verify=name, fallback="closed_book", n_boot=B)
        oof = _oof_answered(s, ok, cb)
        util = np.where(oof, ok, cb)
        parts = [f"{pol.cv['cv_gain'] * 100:+.1f} [{pol.cv['cv_gain_95'][0] * 100:+.1f}, {pol.cv['cv_gain_95'][1] * 100:+.1f}]"]
        for m in (S == 1, S == 0):
            g = bootstrap(lambda u, a: float(u.mean() - a.mean()), util[m], ok[m], n_boot=B)
            parts.append(f"{g[0] * 100:+.1f} [{g[1] * 100:+.1f}, {g[2] * 100:+.1f}]")
        out.append(f"| {label} | " + " | ".join(parts) + f" | {pol.cv['cv_fallback_rate']:.0%} |")
    out += ["", f"Base: RAG accuracy {ok.mean():.1%}; always falling back (closed book) {cb.mean():.1%}. "
                "Predictors observed on a subset only (see n above) are left out here and below.", ""]

    # ---- 000 Table 10: 20% switch rate
    oracle = np.ones(n)
    out += [f"### Switching at a {SWITCH:.0%} rate (paper 000 Table 10; accuracy %)", "",
            "No larger model is available offline here; the \"larger model\" slot is filled twice: by the "
            "embedded model closed-book (a stand-in that is *not* larger) and by an oracle that is always "
            "right (an upper bound: it shows how well each predictor finds the wrong answers).", "",
            "| predictor | switch to closed-book embedded | switch to oracle |", "|---|---|---|"]
    rand_c = (1 - SWITCH) * ok.mean() + SWITCH * cb.mean()
    rand_o = (1 - SWITCH) * ok.mean() + SWITCH
    out.append(f"| Random (expected) | {rand_c * 100:.1f} | {rand_o * 100:.1f} |")
    for label, name in FULL:
        s = col(rows, name)
        a = bootstrap(lambda x, y, z: M.accuracy_at_rate(x, y, z, SWITCH), s, ok, cb, n_boot=B)
        b = bootstrap(lambda x, y, z: M.accuracy_at_rate(x, y, z, SWITCH), s, ok, oracle, n_boot=B)
        out.append(f"| {label} | {ci(a)} | {ci(b)} |")
    out += [f"| \"larger model\" alone | {cb.mean() * 100:.1f} (closed-book embedded) | 100 (oracle) |", ""]

    # ---- 003 stratified outcomes
    suff_pred = col(rows, "suff_label") >= 0.5
    out += ["### Outcomes stratified by sufficient context (paper 003 Figure 3 / Table 4; %)", "",
            "Correct / abstain (a refusal or empty answer) / hallucinate (answered, wrong).", "",
            "| setting | stratum | n | correct | abstain | hallucinate |", "|---|---|---|---|---|---|"]
    strata = [("all", np.ones(n, bool)), ("gold passage present", S == 1), ("gold passage absent", S == 0),
              ("label rater: sufficient", suff_pred), ("label rater: insufficient", ~suff_pred)]
    for setting, corr, ab in (("closed book", cb, 1 - catt), ("RAG", ok, 1 - att)):
        for sname, m in strata:
            cells = [ci(bootstrap(lambda x, y, k=k: M.outcome_split(x, y)[k], corr[m], ab[m], n_boot=B))
                     for k in M.OUTCOMES]
            out.append(f"| {setting} | {sname} | {int(m.sum())} | " + " | ".join(cells) + " |")
    out.append("")

    # ---- selective generation
    from franq.apps.answering import SelectivePolicy

    combos = [("Self P(True)", ["self_p_true"]), ("Suff + Self P(True) (003)", ["suff_label", "self_p_true"]),
              ("AwF (NLI) + Self P(True) (000)", ["nli", "self_p_true"]),
              ("FRANQ P(true)", ["p_true"]),
              ("FRANQ P(true) + P_faithful + Suff + Self P(True)", ["p_true", "p_faithful", "suff_label", "self_p_true"]),
              ("all: FRANQ, P_faithful, NLI, Suff, Self P(True)", ["p_true", "p_faithful", "nli", "suff_label",
                                                                  "self_p_true"])]
    out += [f"### Selective generation (paper 003 section 5.1, 000 Table 4): out-of-fold (5-fold) logistic "
            f"regression; AUC of coverage vs selective accuracy, accuracy at {COVERAGE:.0%} coverage (%)", "",
            f"| signals | selective AUC | accuracy at {COVERAGE:.0%} coverage |", "|---|---|---|"]
    curves = {}
    for label, feats in combos:
        pol = SelectivePolicy.fit(rows, ok, features=feats, coverage=COVERAGE, n_boot=B)
        oof = pol.out_of_fold
        curves[label] = M.selective_curve(oof, ok)
        out.append(f"| {label} | {ci(bootstrap(M.selective_auc, oof, ok, n_boot=B))} | "
                   f"{ci(bootstrap(lambda s, c: M.accuracy_at_coverage(s, c, COVERAGE), oof, ok, n_boot=B))} |")
    out += ["", f"![coverage vs selective accuracy]({PNG})", ""]
    _plot(curves, ok.mean(), RESULTS / PNG)

    # ---- sufficiency raters against contains-gold labels
    G = col(rows, "contains_gold").astype(bool)
    out += ["### Sufficiency raters against contains-gold labels (paper 003 Table 1)", "",
            f"Labels: a gold answer occurs in the passages ({G.mean():.0%} of {n}). Hard label: p >= 0.5.", "",
            "| rater | n | accuracy | F1 | AUROC (threshold-free) | mean p | share rated sufficient |",
            "|---|---|---|---|---|---|---|"]
    raters = [("label, corrected prompt (embedded)", "suff_label"), ("label, verbatim prompt (embedded)", "suff_label_verbatim"),
              ("NLI of gold answer (combined backend)", "nli_gold"), ("gold passage present", "sufficient"),
              ("1-shot CoT autorater (embedded)", "autorater")]
    for label, name in raters:
        keep = np.array([r[name] is not None for r in rows])
        p = np.array([r[name] if r[name] is not None else np.nan for r in rows], dtype=np.float64)[keep]
        g = G[keep]
        if not keep.any():
            continue
        pred = p >= 0.5
        acc = bootstrap(lambda a, b: float((a == b).mean()), pred, g, n_boot=B)
        f1 = bootstrap(_f1, pred, g, n_boot=B)
        auc = bootstrap(_auroc, p, g, n_boot=B)
        out.append(f"| {label} | {int(keep.sum())} | {ci(acc)} | {ci(f1)} | {ci(auc)} | {p.mean():.3f} | "
                   f"{pred.mean():.0%} |")
    secs = [r["seconds"] for r in rows if r.get("seconds")]
    out += ["", f"Model passes for the new signals: {np.mean(secs):.1f} s per question on average (CPU, 1 thread, "
                "shared 2-core machine)." if secs else "", ""]

    body = "\n".join(out)
    cmd = "python benchmarks/eval_answering.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "answering.md").write_text(f"# Answering with faithfulness on nq-open ({stamp})\n\nMade by `{cmd}` "
                                          f"(caches: `benchmarks/cache/answering/`, snapshot `{SNAPSHOT.relative_to(ROOT)}`).\n\n"
                                          + body, encoding="utf-8")
    (RESULTS / "answering-rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if DOC.exists():
        text = DOC.read_text(encoding="utf-8")
        if BEGIN in text and END in text:
            head, rest = text.split(BEGIN, 1)
            block = f"{BEGIN}\n_Made by `{cmd}` on {stamp}._\n\n" + body.replace(f"]({PNG})", f"](../benchmarks/results/{PNG})") + "\n"
            DOC.write_text(head + block + END + rest.split(END, 1)[1], encoding="utf-8")
    print(body)


def _auroc(p, gold) -> float:
    from franq.evaluation.metrics import auroc

    return auroc(p, gold)


def _f1(pred, gold) -> float:
    tp = float((pred & gold).sum())
    return 2 * tp / (pred.sum() + gold.sum()) if pred.sum() + gold.sum() else 0.0


def _oof_answered(s, ok, cb, k=5, seed=0) -> np.ndarray:
    """The out-of-fold answer decisions of ThresholdPolicy.fit (same folds)."""
    from franq.apps.answering.policy import _folds, best_threshold

    out = np.zeros(len(s), dtype=bool)
    for test in _folds(len(s), k, seed):
        train = np.setdiff1d(np.arange(len(s)), test)
        out[test] = s[test] >= best_threshold(s[train], ok[train], cb[train])
    return out


def _plot(curves: dict, base: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for label, (cov, acc) in curves.items():
        ax.plot(cov, acc, label=label, lw=1.2)
    ax.axhline(base, color="grey", ls=":", lw=1, label="accuracy at full coverage")
    ax.set_xlabel("coverage (share answered)")
    ax.set_ylabel("selective accuracy")
    ax.set_title("nq-open, embedded SmolLM2-135M (out-of-fold)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
