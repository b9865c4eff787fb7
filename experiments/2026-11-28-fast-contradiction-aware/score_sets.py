"""Score the fast mode's sets (uncalibrated): P_s, P_c, P_n and the label of each claim of
ExpertQA train / held out (truth), and of their contradicted copies (the one corrupted claim
of each answer, false). Writes sets.npz beside this file.

    OMP_NUM_THREADS=1 python score_sets.py
"""
import sys
from pathlib import Path

import numpy as np
import torch

torch.set_num_threads(1)
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
from franq.evaluation.common import expertqa_held_out  # noqa: E402
from franq.fit.generations import read_jsonl  # noqa: E402
from franq.fit.shipped_contradictions import corrupted_records  # noqa: E402
from franq.fit.shipped_fast import _records, fast_franq  # noqa: E402

fr = fast_franq()
train = read_jsonl(ROOT / "datasets" / "expertqa" / "train.jsonl")
held = expertqa_held_out(ROOT / "datasets")
held_ids = {r["id"] for r in held}
sets = {"train": _records(Path(), "is_true", train), "heldout": _records(Path(), "is_true", held)}
for name, recs in (("train", train), ("heldout", None)):
    if recs is None:  # held out: copies of the rand_test answers no fit has seen
        recs = [r for r in read_jsonl(ROOT / "datasets" / "expertqa" / "test.jsonl") if r["id"] in held_ids]
    sets[name + "-contradicted"] = _records(Path(), "is_true", corrupted_records(recs))
out = {}
for name, rows in sets.items():
    res = fr.score_many([r for r, _ in rows])
    p3, y = [], []
    for (_, labels), r in zip(rows, res):
        for i, c in enumerate(r.claims):
            if c.status == "scored" and labels[i] is not None:
                p3.append([c.p_faithful, c.p_contradicted, c.p_not_mentioned])
                y.append(float(labels[i]))
    out[name + "_p3"], out[name + "_y"] = np.array(p3), np.array(y)
    print(name, len(y), f"{np.mean(y):.3f} true", flush=True)
np.savez(HERE / "sets.npz", **out)
