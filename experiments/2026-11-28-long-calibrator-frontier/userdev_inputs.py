"""The user-style dev set's raw calibrator inputs through the product path (default config,
claims given, calibrator none): P_s, P_c, P_n, UQ_faith, UQ_unfaith per claim, with its gold
label, written to a JSON file so that any long-form calibrator can be read on it offline.

    OMP_NUM_THREADS=1 python experiments/2026-11-28-long-calibrator-frontier/userdev_inputs.py OUT.json
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))


def main(out: str) -> None:
    import torch

    import franq
    from bench_userdev import DATA, load

    torch.set_num_threads(1)
    pipe = franq.Franq.from_config(franq.FranqConfig().with_overrides({"calibration.calibrator": "none"}))
    rows = []
    for r in load(DATA):
        gold = r["claims"]
        scored = pipe.score(r["question"], r["passages"], r["answer"], claims=[c["text"] for c in gold])
        for g, c in zip(gold, scored.claims, strict=True):
            rows.append({"id": r["id"], "label": g["label"], "kind": g.get("kind"), "status": c.status,
                         "p_faithful": c.p_faithful, "p_contradicted": c.p_contradicted,
                         "p_not_mentioned": c.p_not_mentioned, "uq_faith": c.uq_faith, "uq_unfaith": c.uq_unfaith})
    Path(out).write_text(json.dumps({"stack": dict(pipe.preset("long").stack), "claims": rows}), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])
