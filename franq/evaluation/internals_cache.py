"""Cache claim-level internals features of a labelled franq dataset (embedded model).

    franq bench internals-data datasets/expertqa/train.jsonl [--max-prompt-tokens 3000]

For each answer, the with-passages pass with capture (Lookback Lens ratios, attention on
the previous token, hidden states at ``LAYERS``) and the closed-book pass with its hidden
states at ``LAYERS`` (for the ``hidden_closed`` / ``hidden_diff`` feature sets), through
:meth:`franq.Franq.claim_evidence`; writes ``ROOT/benchmarks/cache/internals/<dataset>/<id>.npz``
(resumable: answers already cached are skipped) with, per scorable labelled claim, its
index, labels, pooled lookback (270) and hidden features (float16), the same pooled without
the tokens of ``[n]`` citation markers (``*_nocite``), summed log-probs with
the passages, and per answer token the rag log-probs and attention on the
previous token (for RAUQ). Answers whose prompt exceeds ``--max-prompt-tokens`` are
skipped and listed in ``skipped.txt``. Answers run in a fixed random order (the one
``franq bench`` draws its ExpertQA train sample in), so a run cut short leaves a
random subset, and the first 120 train answers are the long-form benchmark's. Timings go to ``timing.jsonl``.

The shipped probe file is rebuilt without this cache by ``franq fit shipped
probe-SmolLM2-135M-Instruct.Q4_1.json`` (the same passes, in memory); this cache feeds the
benchmark tables of ``franq bench internals``.
"""
from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path

import numpy as np

LAYERS = (4, 8, 12, 16, 20, 24, 29)
CITATION = re.compile(r"\[\d+\]")
"""ExpertQA's citation markers: a claim carrying one is almost always supported (a dataset
artefact), so the features are also pooled without the marker tokens (``*_nocite``)."""
CACHE = Path("benchmarks/cache/internals")
"""Under ``--root``."""


def cache_dir(root: str | Path, dataset: str | Path) -> Path:
    p = Path(dataset)
    return Path(root) / CACHE / f"{p.parent.name}-{p.stem}"


def run(root: Path, dataset: str | Path, *, max_prompt_tokens: int = 3000, limit: int = 0) -> None:
    """Cache the features of every answer of ``dataset`` not cached yet (resumable)."""
    from franq import Franq, FranqConfig
    from franq.io import parse_example
    from franq.lm.capture import CaptureSpec

    out = cache_dir(root, dataset)
    out.mkdir(parents=True, exist_ok=True)
    fr = Franq.from_config(FranqConfig.from_dict({"model": {"threads": 1}}))
    lm = fr.lm
    spec = CaptureSpec(attention=True, hidden_layers=LAYERS, closed_hidden_layers=LAYERS)
    records = [json.loads(line) for line in open(dataset, encoding="utf-8")]
    done = {p.stem for p in out.glob("*.npz")}
    skipped = set((out / "skipped.txt").read_text().split()) if (out / "skipped.txt").exists() else set()
    random.Random(0).shuffle(records)  # the order of franq bench's train sample
    todo = [r for r in records if r["id"] not in done and r["id"] not in skipped]
    if limit:
        todo = todo[:limit]
    print(f"{dataset}: {len(records)} answers, {len(done)} cached, {len(todo)} to do", flush=True)
    for rec in todo:
        ex = parse_example(rec)
        prompt = lm.rag_prompt(ex.question, ex.passages)
        if len(prompt.ids) > max_prompt_tokens:
            with open(out / "skipped.txt", "a") as f:
                f.write(rec["id"] + "\n")
            continue
        t = time.perf_counter()
        evidence = fr.claim_evidence([ex], capture=spec)[0]
        dt = time.perf_counter() - t
        rows = [(i, e) for i, e in enumerate(evidence) if e is not None]
        if not rows:
            np.savez_compressed(out / f"{rec['id']}.npz", index=np.zeros(0, int))
            continue
        internals, closed = rows[0][1].internals, rows[0][1].closed_internals
        labels = [rec["claims"][i] for i, _ in rows]
        lab = lambda key: np.array([np.nan if c.get(key) is None else float(c[key]) for c in labels])  # noqa: E731
        pos = [list(e.claim.token_positions) for _, e in rows]
        _, offsets = lm.encode_answer(ex.answer)
        cites = [m.span() for m in CITATION.finditer(ex.answer)]
        marker = {t for t, (a, b) in enumerate(offsets) if any(a < e and s < b for s, e in cites)}
        plain = [[t for t in p if t not in marker] or p for p in pos]  # the claim without its [n] tokens
        np.savez_compressed(
            out / f"{rec['id']}.npz",
            index=np.array([i for i, _ in rows]), is_faithful=lab("is_faithful"), is_true=lab("is_true"),
            n_tokens=np.array([len(p) for p in pos]),
            starts=np.array([p[0] for p in pos]), stops=np.array([p[-1] + 1 for p in pos]),
            positions=np.concatenate([np.array(p) for p in pos]),
            lookback=np.stack([internals.pooled(p, "lookback") for p in pos]).astype(np.float32),
            hidden=np.stack([np.stack([internals.hidden[la][p].mean(0) for la in LAYERS]) for p in pos]
                            ).astype(np.float16),
            hidden_closed=np.stack([np.stack([closed.hidden[la][p].mean(0) for la in LAYERS]) for p in pos]
                                   ).astype(np.float16),
            log_closed=np.array([rows[0][1].closed_logprobs[p].sum() for p in pos]),
            layers=np.array(LAYERS),
            has_citation=np.array([len(q) < len(p) for p, q in zip(pos, plain)]),
            lookback_nocite=np.stack([internals.pooled(p, "lookback") for p in plain]).astype(np.float32),
            hidden_nocite=np.stack([np.stack([internals.hidden[la][p].mean(0) for la in LAYERS]) for p in plain]
                                   ).astype(np.float16),
            log_rag=np.array([rows[0][1].rag_logprobs[p].sum() for p in pos]),
            token_logprobs=rows[0][1].rag_logprobs.astype(np.float32),
            prev_attn=internals.prev_attn.astype(np.float16))
        with open(out / "timing.jsonl", "a") as f:
            f.write(json.dumps({"id": rec["id"], "prompt_tokens": len(prompt.ids),
                                "answer_tokens": len(rows[0][1].rag_logprobs), "seconds": round(dt, 3)}) + "\n")
    print("done", flush=True)

