"""The shipped three-condition calibrators on natural dev sets, and the candidate refits of
the long one issue 45 names: calibrate the three conditions before mixing, or fit the final
map on the mix; synthetic corruptions at a stated share; flat (constant) maps where the UQ
terms carry no signal. Prints the tables and writes them, with the command, to
benchmarks/results/calibration-natural.md.

    OMP_NUM_THREADS=1 python benchmarks/bench_calibration_natural.py [--verifier DIR] [--out FILE]

Sets (franq.fit.natural), each held apart from every fit:
  ExpertQA train, 5-fold CV   the 120-answer calibration sample, folds by answer: each
                              candidate refitted on 4/5 (and the corrupted copies of those
                              answers), scored on the natural claims of the fifth
  ExpertQA rand_test          the 205 answers no fit has seen (natural, GPT-4 / Bing
                              answers); also with their contradicted copies, and split by
                              whether a claim carries an [n] citation marker
  WiCE held out               Wikipedia sentences against the page they cite (pages up to
                              8,000 characters: 104 of 144); label = supported by the page
                              (WiCE has no truth labels)
  nq-open test                the embedded model's short answers (short calibrator)

The verifier's pass over every set (about 40 minutes on one CPU thread) is cached in
benchmarks/cache/natural-<verifier>.json; later runs take seconds. Rerun with another
verifier: --verifier PATH (its own cache).
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LONG = "calibrator-long-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json"
SHORT = "calibrator-short-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json"
FOLDS = 5
MARKER = re.compile(r"\[\d+\]")


def _fmt(m: dict) -> str:
    ci, floor = m.get("ece_ci"), m.get("ece_floor")
    ece = f"{m['ece']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
    ece += f" | {floor[0]:.3f} ({floor[1]:.3f})" if floor else ""
    return f"{ece} | {m['brier']:.4f} | {m['constant_brier']:.4f} | {m['auroc']:.3f}"


FLOOR_HEADER = ["| fit | eval set | claims (true) | ECE [95% CI by answer] | ECE floor, median (95th pct) | Brier | "
                "constant Brier | AUROC |", "|---|---|---|---|---|---|---|---|"]
"""The tables whose rows carry the ECE floor (nat.scores with boot): what a calibrated P(true)
with the same values shows on the set's claims, labels drawn from it."""


def _soft(flat=(), prior=False, strength=1.0):
    """A fit (natural train, corrupted copies) -> predict of the soft three-condition variant."""
    from calibration.three_condition import ThreeConditionCalibrator
    from franq.fit import natural as nat

    def fit(train, contra):
        data = nat.join(train, contra) if contra is not None else train
        cal = ThreeConditionCalibrator(variant="soft", flat=flat,
                                       prior=float(train["is_true"].mean()) if prior else None,
                                       prior_strength=strength)
        cal.fit(nat.inputs(data), data["is_true"])
        return lambda s: cal.predict(nat.inputs(s))
    return fit


def _mix_map(train, contra):
    from franq.fit import natural as nat

    return nat.MixMapCalibrator().fit(nat.join(train, contra) if contra is not None else train).predict_set


def _gold(train, contra):
    from calibration.three_condition import ThreeConditionCalibrator
    from franq.fit import natural as nat

    gold = nat.gold_conditions(train) + nat.gold_conditions(contra, contradicted=True)
    keep = np.array([g is not None for g in gold])
    data = nat.subset(nat.join(train, contra), keep)
    cal = ThreeConditionCalibrator(variant="condition").fit(nat.inputs(data), data["is_true"],
                                                            condition=[g for g in gold if g is not None])
    return lambda s: cal.predict(nat.inputs(s))


def _constant(train, contra):
    base = float(train["is_true"].mean())
    return lambda s: np.full(len(s["is_true"]), base)


def candidates(share: str) -> dict:
    """name -> (fit(train, contra) or None, uses the corrupted copies)."""
    return {
        "conditions before mixing (soft: verifier's P_s/P_c/P_n as weights), 0% corrupted": (_soft(), False),
        "final map on the raw mix, 0% corrupted": (_mix_map, False),
        f"conditions before mixing (soft), {share} corrupted": (_soft(), True),
        f"conditions before mixing (soft), {share} corrupted, prior moved back to the natural share "
        "(franq.fit.shipped_verifier.long_soft_calibrator)":
            (_soft(prior=True), True),
        f"final map on the raw mix, {share} corrupted": (_mix_map, True),
        f"conditions before mixing (gold conditions), {share} corrupted": (_gold, True),
        f"soft, {share} corrupted, prior moved back, T_s and T_c flat (T_n on UQ_unfaith)":
            (_soft(flat=("supported", "contradicted"), prior=True), True),
        f"soft, {share} corrupted, prior moved back, all three maps flat (conditions only, no UQ term; "
        "long_soft_calibrator(flat=CONDITIONS_ONLY), not shipped)":
            (_soft(flat=("supported", "contradicted", "not_mentioned"), prior=True), True),
        "constant (train share true)": (_constant, False),
    }


def _origin(answer: str) -> str:
    return str(answer).removesuffix("-contradicted")


def cv_predict(fit, train: dict, contra: dict | None, folds: int = FOLDS) -> np.ndarray:
    """Out-of-fold P(true) of ``train``'s claims: folds by answer, seeded."""
    from franq.fit import natural as nat

    answers = sorted(set(map(str, train["answer"])))
    fold_of = {a: k % folds for k, a in enumerate(np.random.default_rng(0).permutation(answers))}
    out = np.zeros(len(train["is_true"]))
    for k in range(folds):
        held = np.array([fold_of[str(a)] == k for a in train["answer"]])
        fitted = fit(nat.subset(train, ~held), None if contra is None else
                     nat.subset(contra, [fold_of.get(_origin(a)) != k for a in contra["answer"]]))
        out[held] = fitted(nat.subset(train, held))
    return out


def long_rows(sets: dict, evals: dict) -> list[str]:
    from calibration.three_condition import ThreeConditionCalibrator
    from franq.fit import natural as nat

    train, contra = sets["expertqa-train"], sets["expertqa-train-contra"]
    share = f"{len(contra['is_true']) / (len(contra['is_true']) + len(train['is_true'])):.0%}"
    shipped = ThreeConditionCalibrator.from_json(ROOT / "franq" / "data" / LONG)
    about = f"{shipped.variant} variant" + (f", flat {'/'.join(shipped.flat)}" if shipped.flat else "") + (
        f", prior {shipped.prior:.3f}" if shipped.prior is not None else "")
    rows = [(f"shipped ({about})", None, lambda s: shipped.predict(nat.inputs(s)))]
    for name, (fit, uses) in candidates(share).items():
        rows.append((name, (fit, contra if uses else None), fit(train, contra if uses else None)))
    rows.append(("raw three-condition mix (no calibration)", None, nat.raw3))
    lines = list(FLOOR_HEADER)
    for name, refit, predict in rows:
        if refit is not None:
            m = nat.scores(cv_predict(refit[0], train, refit[1]), train, boot=300)
            lines.append(f"| {name} | ExpertQA train, {FOLDS}-fold CV by answer | {m['n']} ({m['true']:.3f}) | {_fmt(m)} |")
        for ename, s in evals.items():
            m = nat.scores(predict(s), s, boot=300)
            lines.append(f"| {name} | {ename} | {m['n']} ({m['true']:.3f}) | {_fmt(m)} |")
    return lines


def share_rows(sets: dict, evals: dict, shares=(0.0, 0.05, 0.10, 0.17)) -> list[str]:
    """The soft fit, prior moved back, with the corrupted copies at several shares."""
    from franq.fit import natural as nat

    train, contra = sets["expertqa-train"], sets["expertqa-train-contra"]
    lines = ["| corrupted share | flat maps | eval set | ECE | Brier | constant Brier | AUROC |", "|---|---|---|---|---|---|---|"]
    for share in shares:
        k = min(len(contra["is_true"]), round(share * len(train["is_true"]) / (1 - share)))
        part = nat.subset(contra, np.arange(len(contra["is_true"])) < k)
        for flat in ((), ("supported", "contradicted"), ("supported", "contradicted", "not_mentioned")):
            predict = _soft(flat=flat, prior=True)(train, part)
            for ename, s in evals.items():
                m = nat.scores(predict(s), s)
                lines.append(f"| {k / (k + len(train['is_true'])):.0%} ({k}) | {','.join(f[0].upper() for f in flat) or '-'} | "
                             f"{ename} | {_fmt(m)} |")
    return lines


def strength_rows(sets: dict, evals: dict, strengths=(1, 10, 30, 100, 300)) -> list[str]:
    """The soft fit (17% corrupted, prior moved back) with each map step's Beta prior at
    ``strengths`` pseudo-samples: the bound per step, from the default (1) towards flat maps."""
    from franq.fit import natural as nat

    train, contra = sets["expertqa-train"], sets["expertqa-train-contra"]
    lines = ["| prior strength | eval set | ECE | Brier | constant Brier | AUROC |", "|---|---|---|---|---|---|"]
    for strength in strengths:
        fit = _soft(prior=True, strength=float(strength))
        m = nat.scores(cv_predict(fit, train, contra), train)
        lines.append(f"| {strength} | ExpertQA train, {FOLDS}-fold CV by answer | {_fmt(m)} |")
        predict = fit(train, contra)
        for ename, s in evals.items():
            lines.append(f"| {strength} | {ename} | {_fmt(nat.scores(predict(s), s))} |")
    return lines


def em_rows(sets: dict, evals: dict) -> list[str]:
    """The soft refits with the prior each set's own unlabelled claims give by EM (what
    ``franq fit prior CAL --from-records scored.jsonl`` does at a deployment: no labels)."""
    from calibration.three_condition import ThreeConditionCalibrator
    from franq.fit import natural as nat
    from franq.fit.prior import EM_BOUND_NOTE, estimate_prior

    train, contra = sets["expertqa-train"], sets["expertqa-train-contra"]
    data = nat.join(train, contra)
    lines = [("| fit (17% corrupted) | eval set | prior by EM | ECE before -> after | Brier before -> after | "
              "constant Brier | AUROC |"), "|---|---|---|---|---|---|---|"]
    for label, flat in (("soft", ()), ("soft, T_s and T_c flat", ("supported", "contradicted")),
                        ("soft, all three maps flat", ("supported", "contradicted", "not_mentioned"))):
        for ename, s in evals.items():
            cal = ThreeConditionCalibrator(variant="soft", flat=flat, prior=float(train["is_true"].mean()))
            cal.fit(nat.inputs(data), data["is_true"])
            before = nat.scores(cal.predict(nat.inputs(s)), s)
            cal.prior = estimate_prior(cal, nat.inputs(s))[0]
            after = nat.scores(cal.predict(nat.inputs(s)), s)
            lines.append(f"| {label} | {ename} | {cal.prior:.3f} | {before['ece']:.3f} -> {after['ece']:.3f} | "
                         f"{before['brier']:.4f} -> {after['brier']:.4f} | {after['constant_brier']:.4f} | "
                         f"{after['auroc']:.3f} |")
    return [*lines, "", EM_BOUND_NOTE]


def short_rows(sets: dict, evals: dict) -> list[str]:
    from calibration.three_condition import ThreeConditionCalibrator
    from franq.fit import natural as nat
    from franq.fit.prior import estimate_prior

    train = sets["nq-train"]
    shipped = ThreeConditionCalibrator.from_json(ROOT / "franq" / "data" / SHORT)
    mm = nat.MixMapCalibrator().fit(train)
    base = float(train["is_true"].mean())
    fits = {"shipped (soft, nq-open train)": lambda s: shipped.predict(nat.inputs(s)),
            "final map on the raw mix (nq-open train)": mm.predict_set,
            f"constant (train share true, {base:.3f})": lambda s: np.full(len(s["is_true"]), base),
            "raw three-condition mix (no calibration)": nat.raw3}
    lines = list(FLOOR_HEADER)
    for name, predict in fits.items():
        for ename, s in evals.items():
            m = nat.scores(predict(s), s, boot=300)
            lines.append(f"| {name} | {ename} | {m['n']} ({m['true']:.3f}) | {_fmt(m)} |")
    for ename, s in evals.items():  # the deployment's base rate from its own unlabelled claims
        moved = ThreeConditionCalibrator.from_json(ROOT / "franq" / "data" / SHORT)
        moved.prior = estimate_prior(moved, nat.inputs(s))[0]
        m = nat.scores(moved.predict(nat.inputs(s)), s, boot=300)
        lines.append(f"| shipped, prior {moved.prior:.3g} by EM from the set's unlabelled claims | {ename} | "
                     f"{m['n']} ({m['true']:.3f}) | {_fmt(m)} |")
    return lines


def marker_mask(datasets: Path, test: dict) -> np.ndarray:
    """Per ExpertQA rand_test claim of the set, whether its text carries an [n] citation marker."""
    from franq.evaluation.data import expertqa_held_out
    from franq.fit.training_claims import claim_keys
    from franq.fit.generations import long_scored
    from franq.fit.shipped_calibrators import LONG_STACK

    records = expertqa_held_out(datasets)
    text = {(r["id"], i): c["text"] for r in records for i, c in enumerate(r["claims"])}
    keys = claim_keys(long_scored(datasets, records, LONG_STACK))
    if len(keys) != len(test["is_true"]):
        raise ValueError(f"ExpertQA rand_test: {len(keys)} claims in the snapshot, {len(test['is_true'])} in the cache")
    return np.array([bool(MARKER.search(text[k])) for k in keys])


def main() -> int:
    from franq.fit import natural as nat

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--verifier", default=None, help="A verifier directory (default: the shipped one).")
    ap.add_argument("--cache", default=None, help="The verifier pass's cache (default: benchmarks/cache/natural-<verifier>.json).")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "calibration-natural.md"))
    ap.add_argument("--cached-only", action="store_true", help="Measure only the sets the cache holds.")
    args = ap.parse_args()
    t0 = time.perf_counter()
    datasets = ROOT / "datasets"
    sets = nat.natural_sets(datasets, args.verifier, cache=Path(args.cache) if args.cache else None,
                            echo=lambda m: print(m, file=sys.stderr), compute=not args.cached_only)
    test = sets["expertqa-test"]
    long_evals = {"ExpertQA rand_test (natural)": test}
    if "expertqa-test-contra" in sets:
        contra = sets["expertqa-test-contra"]
        with_contra = nat.join(test, contra)
        long_evals[f"ExpertQA rand_test + contradicted copies ({len(contra['is_true']) / len(with_contra['is_true']):.0%})"] = \
            with_contra
    if "wice-heldout" in sets:
        long_evals["WiCE held out (label: supported by the cited page)"] = sets["wice-heldout"]
    marked = marker_mask(datasets, test)
    split = {"ExpertQA rand_test, claims with an [n] marker": nat.subset(test, marked),
             "ExpertQA rand_test, claims without one": nat.subset(test, ~marked)}
    nq = sets["nq-test"]
    short_evals = {f"nq-open test, {v} passages": nat.subset(nq, [x == v for x in nq["variant"]])
                   for v in ("clean", "corrupted")}
    natural_evals = {k: v for k, v in long_evals.items() if "contradicted" not in k}
    left_out = [n for n in (*nat.LONG_SETS, *nat.SHORT_SETS) if n not in sets]
    command = (f"OMP_NUM_THREADS=1 python benchmarks/bench_calibration_natural.py"
               f"{' --verifier ' + args.verifier if args.verifier else ''}{' --cached-only' if args.cached_only else ''}")
    out = [f"# Calibration on natural dev sets (issue 45 item 1); verifier {sets['verifier']}", "",
           (f"Command: `{command}` ({time.perf_counter() - t0:.0f} s from the cache of the verifier's pass; the pass "
           "itself, about 40 minutes on one CPU thread, is cached in benchmarks/cache/natural-<verifier>.json). "
           "ECE: 10 equal-width bins; ECE floor: the ECE a perfectly calibrated P(true) with the same values "
           "shows on the set's claims (labels drawn from it, 300 draws; calibration.metrics.ece_floor): an ECE "
           "target below it cannot be told from sampling on a set this size (WiCE's 104 claims: about .10); "
           "constant Brier: the best constant for the set (its own share true, p(1-p), "
           "an oracle: no fit knows it); AUROC of P(true) for the labels. WiCE held out: the items whose cited page "
           f"has at most {nat.WICE_MAX_CHARS:,} characters (UQ values: datasets/generations/{nat.WICE_SNAPSHOT}); "
           "its label is support by the page, as WiCE has no truth labels (a Wikipedia sentence its page does not "
           "support is mostly still true), so read its ECE as calibration against support."), "",
           "## Long form: fitted on the 120-answer ExpertQA train sample (its corrupted copies at the share named)", "",
           *([f"Sets not in this run (the verifier's pass was not finished): {left_out}.", ""] if left_out else []),
           *long_rows(sets, long_evals), "",
           ("## Long form: the share of synthetic corruptions in the fit (soft variant, prior moved back to the "
            "natural share; flat: S = T_s, C = T_c, N = T_n constant)"), "",
           *share_rows(sets, natural_evals), "",
           ("## Long form: the deployment's base rate from its own unlabelled claims (EM, Saerens et al. 2002; "
            "the train share is .904, ExpertQA rand_test's .948)"), "",
           *em_rows(sets, natural_evals), "",
           ("## Long form: the bound per step (each isotonic step's Beta prior, in pseudo-samples; soft variant, "
            "17% corrupted, prior moved back)"), "",
           *strength_rows(sets, natural_evals), "",
           ("## Long form: ExpertQA rand_test with and without [n] citation markers (claims scored as written; "
            f"{int(marked.sum())} of {len(marked)} carry one)"), "",
           *share_rows(sets, split, shares=(0.17,)), "",
           "## Short form: fitted on nq-open train (300 questions), the embedded model's attempted answers", "",
           *(short_rows(sets, short_evals) if "nq-train" in sets else ["not measured in this run"]), ""]
    text = "\n".join(out)
    print(text)
    Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
