"""Observer short form: does FRANQ rank the right answer above a wrong one to the same question?

    franq bench observer [--n-boot 1000] [--fit]

Pairs from nq-open (``datasets/nq-open``): for each question, its first gold answer
(true) against a **distractor passage's answer** (false): the gold answer of the question
whose gold passage is one of this question's BM25 distractors (the first in passage
order whose answer does not match this question's gold). Both are short spans of the same
kind and both occur in the passages shown, so answer length and "does it appear in the
context" do not separate them by construction. A second set pairs the gold answer with the
model's greedy answer where that is wrong (a realistic hallucination, but a sentence
against a span: answer length separates it, reported as a cue).

No model runs: the 10 samples per question (temperature 1, with the passages) are the
committed generations (``datasets/generations/short-nq-open.*.jsonl.gz``); they depend
only on the question and passages, so one sample set serves both answers of a pair. The
pipeline's short preset scores each answer as ``franq score --mode short`` does, in
observer mode (answer-dependent terms) and in-policy (the paper's terms with the shipped
in-policy calibrator). ``--fit`` refits the shipped observer calibrator on the train
questions (pairs of both kinds plus every attempted greedy answer) and writes it to
``franq/data``; the test questions are used only for the table.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from calibration.contract import ClaimInputs
from calibration.franq import FranqCalibrator
from franq.config import FranqConfig
from franq.evaluation.benchmark import Layout, read_cache, slug
from franq.evaluation.data import load_nq_open, passage_answers
from franq.evaluation.metrics import auroc, bootstrap
from franq.evaluation.observe import short_key
from franq.evaluation.units import NamedModel, attempted, is_correct
from franq.evidence.samples import SamplingOptions
from franq.faithfulness.combined import CombinedFaithfulness
from franq.io import Example
from franq.lm.load import EMBEDDED_NAME
from franq.mix import mix
from franq.pipeline import Franq

RESULTS = Path("benchmarks") / "results" / "observer-short.md"
CACHE_DIR = Path("benchmarks") / "cache" / "observer"
"""Both under ``--root``."""
EXTRA = ["answer_likelihood", "answer_consistency", "semantic_entropy_norm", "semantic_entropy", "eigval"]
PRIMARY = {"answer_mass": "p_answer_mass", "answer_share": "p_answer_share",
           "answer_consistency": "p_answer_consistency", "answer_likelihood": "p_answer_token"}
COMBOS = [(a, b) for a in PRIMARY for b in PRIMARY]


@dataclass(frozen=True)
class CachedSamples:
    """The committed samples of one question, as a sample set the pipeline reads."""

    texts: tuple[str, ...]
    logprobs: np.ndarray
    lengths: np.ndarray

    @classmethod
    def of(cls, rec: dict) -> CachedSamples:
        s = rec["samples"]
        return cls(tuple(x["text"] for x in s), np.array([x["logprob"] for x in s], dtype=np.float64),
                   np.array([x["n_tokens"] for x in s], dtype=np.int64))


def build_answers(layout: Layout, split: str, n: int, cache: dict, owners: dict[int, list[str]]):
    """Rows ``(item, samples, answer, is_true, kind, pair)`` for the first ``n`` questions."""
    gold_ids = {}
    with open(layout.nq / f"{split}.jsonl", encoding="utf-8") as f:
        for r in map(json.loads, f):
            gold_ids[r["id"]] = r["passage_ids"][r["gold_position"]]
    rows, counts = [], {"questions": 0, "not_observed": 0, "distractor_pairs": 0, "greedy_pairs": 0}
    for it in load_nq_open(layout.nq, split, "clean", limit=n):
        rec = cache.get(short_key(it.id, it.passage_ids, SamplingOptions()))
        if rec is None:
            counts["not_observed"] += 1
            continue
        counts["questions"] += 1
        samples, gold = CachedSamples.of(rec), it.answers[0]
        wrong = next((a[0] for pid in it.passage_ids if pid != gold_ids[it.id] and (a := owners.get(pid))
                      and not is_correct(a[0], it.answers) and not is_correct(gold, a)), None)
        if wrong is not None:
            counts["distractor_pairs"] += 1
            rows += [(it, samples, gold, 1, "distractor", it.id), (it, samples, wrong, 0, "distractor", it.id)]
        greedy = rec["greedy"]["text"]
        if attempted(greedy):
            right = is_correct(greedy, it.answers)
            rows.append((it, samples, greedy, int(right), "greedy", it.id))
            if not right:
                counts["greedy_pairs"] += 1
                rows.append((it, samples, gold, 1, "greedy", it.id))
    return rows, counts


def score_rows(rows, *, scoring: str, calibrator: str = "none", faith=None, lm=None) -> list:
    uq = {"short_scoring": scoring}
    if scoring == "observer":
        uq["observer"] = {"faith": "answer_mass", "unfaith": "answer_share", "extra": EXTRA}
    config = FranqConfig.from_dict({"mode": "short", "uq": uq, "calibration": {"calibrator": calibrator}})
    franq = Franq(config, lm or NamedModel(EMBEDDED_NAME), faithfulness=faith)
    examples = [Example(it.question, it.passages, answer) for it, _, answer, *_ in rows]
    return franq, franq.score_many(examples, sample_sets=[s for _, s, *_ in rows])


def observed(rows, split: str, faith, lm_holder: list, cache_dir: Path) -> list[dict]:
    """Observer-mode results of each row (P_faithful and every signal), cached on disk:
    only the answer's own likelihood needs the model (one teacher-forced pass per answer)."""
    path = cache_dir / f"{split}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    done = {}
    if path.exists():
        done = {r["key"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    key = [f"{it.id}|{answer}" for it, _, answer, *_ in rows]
    todo = list({k: i for i, k in reversed(list(enumerate(key))) if k not in done}.values())[::-1]  # once per key
    if todo:
        if not lm_holder:
            from franq.lm import CausalLM

            lm_holder.append(CausalLM.load(device="cpu"))
        with path.open("a", encoding="utf-8") as f:
            questions = list(dict.fromkeys(rows[i][5] for i in todo))
            for q in range(0, len(questions), 8):  # 8 questions at a time: a question's answers share its prefill
                ask = set(questions[q:q + 8])
                chunk = [i for i in todo if rows[i][5] in ask]
                start = sum(1 for i in todo if rows[i][5] in set(questions[:q]))
                _, res = score_rows([rows[i] for i in chunk], scoring="observer", faith=faith, lm=lm_holder[0])
                for i, r in zip(chunk, res):
                    c = r.claims[0]
                    done[key[i]] = {"key": key[i], "p_faithful": c.p_faithful, "signals": c.signals}
                    f.write(json.dumps(done[key[i]]) + "\n")
                f.flush()
                print(f"{split}: {start + len(chunk)}/{len(todo)} answers scored", file=sys.stderr)
    return [done[k] for k in key]


def auroc_ci(y, p, groups, n_boot: int, seed: int = 0):
    """AUROC over the answers and a 95% percentile interval, resampling questions."""
    return bootstrap(auroc, np.asarray(p, dtype=np.float64), np.asarray(y), n_boot=n_boot, seed=seed, alpha=0.05,
                     groups=groups)


def pair_win(y, p, groups) -> float:
    """Share of pairs whose true answer gets the higher score (ties count half)."""
    wins = []
    for g in sorted(set(groups)):
        idx = [i for i, x in enumerate(groups) if x == g]
        t = [p[i] for i in idx if y[i] == 1]
        f = [p[i] for i in idx if y[i] == 0]
        if t and f:
            wins.append(np.mean([(a > b) + 0.5 * (a == b) for a in t for b in f]))
    return float(np.mean(wins))


def inputs(observed_rows: list[dict], combo: tuple[str, str]) -> np.ndarray:
    """(P_faithful, UQ_faith, UQ_unfaith) per answer for a choice of the two scorers (each
    answer scorer's probability is its primary signal)."""
    return np.array([[r["p_faithful"], r["signals"][PRIMARY[combo[0]]], r["signals"][PRIMARY[combo[1]]]]
                     for r in observed_rows], dtype=np.float64)


def run(root: Path, *, raw: str | Path | None = None, n_train: int = 300, n_test: int = 200, n_boot: int = 1000,
        fit: bool = False, out_dir: Path | None = None, observe_only: str | None = None,
        command: str = "franq bench observer") -> str | None:
    """The tables, printed and written to ``root/benchmarks/results/observer-short.md``; with
    ``fit`` the calibrator goes into ``out_dir`` (default ``root/benchmarks/cache``)."""
    root = Path(root).resolve()
    layout, cache_dir = Layout(root), root / CACHE_DIR
    out_dir = Path(out_dir).resolve() if out_dir is not None else root / "benchmarks" / "cache"
    if fit:  # made before the passes, not found missing after them
        out_dir.mkdir(parents=True, exist_ok=True)
    faith = CombinedFaithfulness(lm_name=EMBEDDED_NAME)
    cache = read_cache(layout, layout.cache / f"short-nq-open.{slug(EMBEDDED_NAME)}.jsonl")
    owners = passage_answers(layout.nq, raw)
    train, train_counts = build_answers(layout, "train", n_train, cache, owners)
    test, test_counts = build_answers(layout, "test", n_test, cache, owners)
    y_train = np.array([r[3] for r in train])
    lm: list = []
    if observe_only:
        observed(train if observe_only == "train" else test, observe_only, faith, lm, cache_dir)
        return None
    obs_test, obs_train = observed(test, "test", faith, lm, cache_dir), observed(train, "train", faith, lm, cache_dir)

    # fit on what observer mode scores: answers this model did not generate (the distractor pairs); the
    # model's own greedy answers are in-policy, and it rates its own hallucinations highly (second table)
    keep = [i for i, r in enumerate(train) if r[4] == "distractor"]
    train, obs_train, y_train = [train[i] for i in keep], [obs_train[i] for i in keep], y_train[keep]
    # choose the observer mix on the train questions: condition-calibrated, 5-fold by question
    choice = {combo: cv_auroc(inputs(obs_train, combo), y_train, [r[5] for r in train]) for combo in COMBOS}
    best = max(choice, key=choice.get)
    print("train 5-fold AUROC (condition-calibrated) by (UQ_faith, UQ_unfaith):",
          {f"{a}/{b}": round(v, 3) for (a, b), v in choice.items()}, "-> best", best, file=sys.stderr)

    config = FranqConfig.from_dict({"mode": "short", "uq": {"observer": {"faith": best[0], "unfaith": best[1]}},
                                    "calibration": {"calibrator": "none"}})
    stack = Franq(config, NamedModel(EMBEDDED_NAME), faithfulness=faith).preset("observer").stack
    cal = FranqCalibrator(variant="condition", fitted_for=stack, description=(
        f"observer short-form calibrator: fitted by franq bench observer --fit on nq-open train questions "
        f"1-{n_train} ({len(train)} answers: the gold answer vs a distractor passage's answer, per question)"))
    cal.fit(ClaimInputs(*inputs(obs_train, best).T), y_train)
    cal_path = None
    if fit:
        cal_path = out_dir / (f"calibrator-short-observer-{slug(stack['model'])}-"
                                         f"{slug(stack['faithfulness'])}.json")
        cal.to_json(cal_path)

    x_test = inputs(obs_test, best)
    cols = {"p_faithful": x_test[:, 0], "p_true_raw": mix(*x_test.T),
            "p_true_calibrated": cal.predict(ClaimInputs(*x_test.T))}
    for name in obs_test[0]["signals"]:
        v = np.array([r["signals"][name] for r in obs_test])
        cols[name] = -v if name.startswith("u_") else v  # oriented: higher = more likely true
    _, inp = score_rows(test, scoring="in_policy", calibrator="default", faith=faith)
    in_cols = {"p_true_raw": np.array([r.claims[0].p_true_raw for r in inp]),
               "p_true_calibrated": np.array([r.claims[0].p_true_calibrated for r in inp])}
    tables = []
    for kind in ("distractor", "greedy"):
        idx = [i for i, r in enumerate(test) if r[4] == kind and (kind == "distractor" or
                                                                  sum(x[5] == r[5] and x[4] == kind for x in test) == 2)]
        y = np.array([test[i][3] for i in idx])
        groups = [test[i][5] for i in idx]
        words = np.array([-len(test[i][2].split()) for i in idx], dtype=np.float64)
        rows = [("P_faithful alone", cols["p_faithful"]),
                (f"FRANQ observer, condition-calibrated ({best[0]} / {best[1]})", cols["p_true_calibrated"]),
                ("FRANQ observer, raw mix", cols["p_true_raw"]),
                *((f"signal {n}", cols[n]) for n in ("p_answer_share", "p_answer_mass", "p_answer_mass_raw",
                                                      "p_answer_consistency", "p_answer_token", "p_answer_token_closed",
                                                      "u_semantic_entropy_norm")),
                ("FRANQ in-policy (semantic entropy / eigval), shipped calibrator", in_cols["p_true_calibrated"]),
                ("FRANQ in-policy, raw mix", in_cols["p_true_raw"]),
                ("cue: fewer words (not a method)", words)]
        lines = ["| method | AUROC [95% CI] | pair win rate |", "|---|---|---|"]
        for name, v in rows:
            v = np.asarray(v)[idx] if len(v) == len(test) else v
            a, lo, hi = auroc_ci(y, v, groups, n_boot)
            lines.append(f"| {name} | {a:.3f} [{lo:.3f}, {hi:.3f}] | {pair_win(y, v, groups):.3f} |")
        tables.append((kind, len(set(groups)), int(y.sum()), len(y) - int(y.sum()), "\n".join(lines)))
    text = [f"# Observer short form on nq-open right / wrong answer pairs\n\nCommand: `{command}`\n",
            "Pairs: the first gold answer (true) against a wrong answer to the same question; the 10 cached "
            "samples of the question (embedded SmolLM2-135M, temperature 1, with the passages) serve both answers. "
            "AUROC over all answers of the pairs, 95% interval from "
            f"{n_boot} bootstrap resamples of the questions; pair win rate: share of pairs where the right "
            "answer scores higher (ties count half).\n",
            f"Train questions 1-{n_train}: {json.dumps(train_counts)}; the calibrator and the mix choice use "
            f"the {len(train)} answers of the distractor pairs ({int(y_train.sum())} true). "
            f"Test questions 1-{n_test}: {json.dumps(test_counts)}.\n",
            "Observer mix chosen on train (5-fold by question, condition-calibrated AUROC): "
            + ", ".join(f"{a} / {b}: {v:.3f}" for (a, b), v in choice.items()) + f"; chosen: **{best[0]} / {best[1]}**.\n",
            "Calibrator: condition variant, fitted on the train answers only"
            + (f", written to `{cal_path.relative_to(root) if cal_path.is_relative_to(root) else cal_path}`"
               if cal_path else " (not written: run with --fit)")
            + f"; train ECE {json.dumps(cal.train_ece_)}.\n"]
    for kind, n_pairs, n_true, n_false, table in tables:
        what = ("distractor-passage answer (a span from another question's gold passage, shown in the context)"
                if kind == "distractor" else "the model's wrong greedy answer (a sentence: length is a cue)")
        text.append(f"## Gold answer vs {what}\n\n{n_pairs} test pairs ({n_true} true, {n_false} false answers)\n\n{table}\n")
    out = "\n".join(text)
    print(out)
    (root / RESULTS).write_text(out, encoding="utf-8")
    return out


def cv_auroc(x: np.ndarray, y, groups, k: int = 5) -> float:
    """Condition-calibrated AUROC of out-of-fold predictions, folds by question."""
    uniq = sorted(set(groups))
    fold = {g: i % k for i, g in enumerate(np.random.default_rng(0).permutation(uniq))}
    f = np.array([fold[g] for g in groups])
    pred = np.empty(len(y))
    for i in range(k):
        cal = FranqCalibrator(variant="condition").fit(ClaimInputs(*x[f != i].T), y[f != i])
        pred[f == i] = cal.predict(ClaimInputs(*x[f == i].T))
    return auroc(pred, y)

