"""Verifiers side by side on the held-out sets, read the way ``franq score`` reads them
(every window of every passage, the card's aggregation rule, citation markers stripped):

    OMP_NUM_THREADS=1 python benchmarks/bench_verifier_heldout.py --model DIR [--model DIR2 ...]
        [--device cpu] [--out benchmarks/results/verifier-heldout.md]

Sets: WiCE held out (144 claims, whole pages), 400 ExpertQA rand_test claims of the answers
no fit has seen, the 199 of those answers' claims contradicted by a typed substitution (all
false; franq.fit.verifier.eval.long_evidence_sets), and the two user-style dev sets written by
people (datasets/userdev and datasets/userdev2, where present; never trained on; claims given). Per verifier and set:
balanced accuracy of P_supported at 0.5 (supported vs not) and its AUROC; on the user set also
the share of contradicted claims with P_supported < 0.5, of supported claims with P_supported
>= 0.5, and of not-mentioned claims whose argmax is "contradicted", and the supported claims
kept by word cover (the share of the claim's content words found in its closest passage: a
claim worded further from its passage has a lower cover; experiments/2026-11-29-near-relevant-support
found the contrastive-trained candidates losing those). The table and the command that made it
are written to --out (with a .json beside it).
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
USERDEV = ROOT / "datasets" / "userdev" / "answers.jsonl"
USER_SETS = {"userdev": USERDEV, "userdev2": ROOT / "datasets" / "userdev2" / "answers.jsonl"}


def userdev_items(path: Path = USERDEV) -> tuple[list, list[str], list[str]]:
    """``(items, labels, kinds)`` of the user-style dev set: items ``(passage texts, claim)``."""
    items, labels, kinds = [], [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        texts = [p["text"] if isinstance(p, dict) else p for p in rec.get("passages") or []]
        for c in rec["claims"]:
            items.append((texts, c["text"]))
            labels.append(c["label"])
            kinds.append(c.get("kind") or "")
    return items, labels, kinds


def _binary(m: np.ndarray, y: np.ndarray) -> dict:
    from franq.evaluation.metrics import auroc, balanced_accuracy

    s = m[:, 0]
    return {"n": len(y), "bacc": round(float(balanced_accuracy(s, y)), 4), "auroc": round(float(auroc(s, y)), 4)} \
        if 0 < y.sum() < len(y) else {"n": len(y), "caught": round(float(np.mean(s < 0.5)), 4)}


COVER_BINS = (0.0, 0.7, 0.8, 0.9)


def word_cover(claim: str, passages: list[str]) -> float:
    """The share of ``claim``'s content words found in the passage holding most of them."""
    from franq.fit.verifier.data import words

    want = words(claim)
    return max((len(want & words(p)) / len(want) for p in passages), default=0.0) if want else 1.0


def _by_cover(kept: np.ndarray, cover: np.ndarray) -> dict:
    """``{"[lo, hi)": [claims, share kept]}`` over :data:`COVER_BINS`."""
    edges = (*COVER_BINS, np.inf)
    out = {}
    for lo, hi in itertools.pairwise(edges):
        m = (cover >= lo) & (cover < hi)
        out[f"[{lo:.1f}, {min(hi, 1.0):.1f}{']' if hi == np.inf else ')'}"] = [int(m.sum()), round(float(kept[m].mean()), 3)
                                                                            if m.any() else None]
    return out


def _userdev(m: np.ndarray, labels: list[str], kinds: list[str], items: list | None = None) -> dict:
    lab = np.array(labels)
    out = _binary(m, (lab == "supported").astype(int))
    con = lab == "contradicted"
    nm = np.isin(lab, ["not_mentioned_true", "not_mentioned_false"])
    out.update({"contradicted_caught": round(float(np.mean(m[con, 0] < 0.5)), 4),
                "supported_kept": round(float(np.mean(m[lab == "supported", 0] >= 0.5)), 4),
                "nm_argmax_contradicted": round(float(np.mean(m[nm].argmax(1) == 1)), 4),
                "by_kind": {k: round(float(np.mean(m[con & (np.array(kinds) == k), 0] < 0.5)), 3)
                            for k in sorted(set(np.array(kinds)[con]))}})
    if items is not None:
        sup = lab == "supported"
        cover = np.array([word_cover(c, list(p)) for (p, c), s in zip(items, sup, strict=True) if s])
        out["supported_kept_by_cover"] = _by_cover(m[sup, 0] >= 0.5, cover)
    return out


def report_read(name: str, m: np.ndarray, y: np.ndarray, kinds) -> tuple[str, dict]:
    """``(key, reading)`` of a report set ``"R <name>"`` under three-way probabilities ``m``: a
    user-style set by :func:`_userdev`, the obvious cases (true, then swapped: how many are on the
    right side of P_s .5, and each P_s), any other by :func:`_binary`."""
    key = name[2:]
    if key in USER_SETS:
        return key, _userdev(m, list(y), list(kinds))
    if key == "obvious":
        return key, {"right": int(np.sum((m[:, 0] >= 0.5) == (y == 1))), "of": len(y), "p_s": np.round(m[:, 0], 3).tolist()}
    return key, _binary(m, y)


def _verified(v, items) -> np.ndarray:
    """``(n, 3)``: each claim's (P_supported, P_contradicted, P_not_mentioned) against its passages."""
    return np.array([[c.p_supported, c.p_contradicted, c.p_not_mentioned] for c in v.verify(items)])


def evaluate(model_dir: str, device: str) -> dict:
    from franq.fit.verifier.eval import long_evidence_sets
    from franq.verifier import Verifier

    v = Verifier(model_dir, device=device)
    res: dict = {"name": v.name}
    for name, (items, y) in long_evidence_sets(ROOT / "datasets").items():
        t0 = time.perf_counter()
        m = _verified(v, items)
        res[name] = {**_binary(m, np.asarray(y)), "seconds": round(time.perf_counter() - t0, 1)}
    for name, path in USER_SETS.items():
        if path.is_file():
            items, labels, kinds = userdev_items(path)
            res[name] = _userdev(_verified(v, items), labels, kinds, items)
    return res


def table(results: list[dict]) -> list[str]:
    user = [u for u in USER_SETS if u in results[0]]
    sets = [k for k in results[0] if k not in ("name", *USER_SETS)]
    columns = ["verifier", *(f"{s}: BAcc / AUROC" if "bacc" in results[0][s] else f"{s}: caught" for s in sets)]
    for u in user:
        columns += [f"{u} BAcc / AUROC", "contradicted caught", "supported kept", "nm argmax contradicted"]
    rows = ["| " + " | ".join(columns) + " |", "|---" * len(columns) + "|"]
    for r in results:
        cells = [f"{r[s]['bacc']:.3f} / {r[s]['auroc']:.3f}" if "bacc" in r[s] else f"{r[s]['caught']:.3f}"
                 for s in sets]
        for u in user:
            d = r[u]
            cells += [f"{d['bacc']:.3f} / {d['auroc']:.3f}", f"{d['contradicted_caught']:.3f}",
                      f"{d['supported_kept']:.3f}", f"{d['nm_argmax_contradicted']:.3f}"]
        rows.append(f"| {r['name']} | " + " | ".join(cells) + " |")
    for u in user:
        all_kinds = sorted({k for r in results for k in r[u]["by_kind"]})
        rows += ["", f"{u}, contradicted claims with P_supported < 0.5, by kind:", "",
                 "| verifier | " + " | ".join(all_kinds) + " |", "|---" * (1 + len(all_kinds)) + "|"]
        rows += [f"| {r['name']} | " + " | ".join(str(r[u]["by_kind"].get(k, "")) for k in all_kinds) + " |"
                 for r in results]
        bins = list(results[0][u]["supported_kept_by_cover"])
        rows += ["", f"{u}, supported claims with P_supported >= 0.5, by word cover (claims in the bin: "
                 + ", ".join(f"{b} {results[0][u]['supported_kept_by_cover'][b][0]}" for b in bins) + "):", "",
                 "| verifier | " + " | ".join(bins) + " |", "|---" * (1 + len(bins)) + "|"]
        rows += [f"| {r['name']} | " + " | ".join(str(r[u]["supported_kept_by_cover"][b][1]) for b in bins) + " |"
                 for r in results]
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", action="append", required=True, help="A franq verifier directory (repeatable).")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "verifier-heldout.md"))
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    results = [evaluate(m, args.device) for m in args.model]
    rows = table(results)
    print("\n".join(rows))
    cmd = "OMP_NUM_THREADS=1 python benchmarks/bench_verifier_heldout.py " + " ".join(
        f"--model {m}" for m in args.model) + (f" --device {args.device}" if args.device != "cpu" else "")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("# Verifiers on the held-out sets\n\n" + (__doc__.split("\n\n")[0]) + "\n\n    " + cmd + "\n\n"
                   + "\n".join(rows) + "\n", encoding="utf-8")
    out.with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
