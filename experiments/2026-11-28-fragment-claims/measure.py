"""Fragment claims ("1991", "Frank Herbert", "Born in Ulm") read with their question or alone,
through the long form's verifier reading (every window, the `relevant` aggregation, the slot
check), on nq-open test (held out: the embedded model's short answers and the gold answers,
each given as the answer's one claim), and how many claims of the other dev sets are
fragments at all.

    OMP_NUM_THREADS=1 python experiments/2026-11-28-fragment-claims/measure.py
"""
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))


def pipeline():
    from franq.config import FranqConfig
    from franq.fit.shipped_fast import PASSAGE_CHARS
    from franq.pipeline import Franq

    # the fast pipeline (no causal LM) reading every window, as the long form's verifier does
    config = FranqConfig.from_dict({"mode": "fast", "calibration": {"calibrator": "none"},
                                    "faithfulness": {"verifier": {"top_windows": 1000}},
                                    "limits": {"passage_chars": PASSAGE_CHARS}})
    return Franq(config, None)


def read(fr, rows, with_question: bool):
    import franq.stages.record as record

    saved = record.needs_question
    if not with_question:
        record.needs_question = lambda claim: False
    try:
        res = fr.score_many([{**rec, "claims": [rec["answer"]]} for rec, _ in rows])
    finally:
        record.needs_question = saved
    return np.array([r.claims[0].p_faithful for r in res]), np.array([float(y) for _, y in rows])


def metrics(p, y) -> dict:
    from franq.evaluation.metrics import auroc, balanced_accuracy

    return {"n": int(len(y)), "true": float(y.mean()),
            "auroc": float(auroc(p, y)) if 0 < y.sum() < len(y) else None,
            "bacc": float(balanced_accuracy(p, y)) if 0 < y.sum() < len(y) else None,
            "read_supported": float(np.mean(p >= 0.5))}


def fragment_shares() -> dict:
    from bench_userdev import DATA, load
    from claims.fragments import is_fragment
    from franq.fit.shipped_fast import labelled_sets

    out = {}
    sets = labelled_sets(ROOT / "datasets", ("expertqa-train", "expertqa-heldout", "wice-heldout"))
    for name, rows in sets.items():
        claims = [c for rec, _ in rows for c in rec["claims"]]
        out[name] = (sum(map(is_fragment, claims)), len(claims))
    ud = [c["text"] for r in load(DATA) for c in r["claims"]]
    out["userdev"] = (sum(map(is_fragment, ud)), len(ud))
    return out


def main() -> None:
    import torch

    from franq.fit.shipped_fast import NQ_TEST, _nq

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    datasets = ROOT / "datasets"
    model = _nq(datasets, "test", NQ_TEST)
    gold = _nq(datasets, "test", NQ_TEST, gold=True)
    from claims.fragments import is_fragment

    fr = pipeline()
    result = {"fragments": {k: list(v) for k, v in fragment_shares().items()}}
    for name, rows in (("model answers", model), ("gold answers", gold)):
        result.setdefault("nq_fragment_share", {})[name] = float(np.mean([is_fragment(r["answer"]) for r, _ in rows]))
    arrays = {}
    for how in ("alone", "with question"):
        pm, ym = read(fr, model, how == "with question")
        pg, yg = read(fr, gold, how == "with question")
        arrays[how] = (pm, ym, pg, yg)
        fm = np.array([is_fragment(r["answer"]) for r, _ in model])
        fg = np.array([is_fragment(r["answer"]) for r, _ in gold])
        result[how] = {"model answers": metrics(pm, ym), "model and gold answers":
                       metrics(np.concatenate([pm, pg]), np.concatenate([ym, yg])),
                       "gold answers read supported": float(np.mean(pg >= 0.5)),
                       "fragments only: model and gold answers":
                       metrics(np.concatenate([pm[fm], pg[fg]]), np.concatenate([ym[fm], yg[fg]])),
                       "fragments only: model answers": metrics(pm[fm], ym[fm])}
    np.savez_compressed(Path(__file__).parent / "arrays.npz", **{f"{how}-{k}": v for how, a in arrays.items()
                                                                  for k, v in zip(("pm", "ym", "pg", "yg"), a)})
    result["seconds"] = round(time.perf_counter() - t0)
    text = json.dumps(result, indent=1)
    print(text)
    (Path(__file__).parent / "result.json").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
