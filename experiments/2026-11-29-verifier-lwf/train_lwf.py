"""Contrastive training that keeps v7's reading of natural evidence by distillation
("learning without forgetting", Li & Hoiem 2016): each step is half contrastive pairs
(cross-entropy on their labels) and half v7's own natural training pairs, on which the
student is pulled towards v7's three-way output (KL(v7 || student)), not towards their
labels. See README.md beside this file.

    OMP_NUM_THREADS=1 python experiments/2026-11-29-verifier-lwf/train_lwf.py \
        --pairs pairs-v8.json.xz --out WORK [--steps 1000] [--kl-weight 1.0] [--windows]

Resumable: WORK/checkpoint.pt every ``--checkpoint-every`` steps (a copy of each kept as
WORK/keep/step-NNNNN.pt, the format experiments/2026-11-28-verifier-v9-cpu/choose.py reads).
"""
from __future__ import annotations

import argparse
import json
import logging
import lzma
import random
import shutil
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
V7 = ROOT / "franq" / "data" / "verifier"
NATURAL = ("snli", "synthetic", "nq-qa", "nq-declarative", "expertqa", "expertqa-contradicted", "wice")


def stream(pairs: list[dict], batch_size: int, seed: int):
    """Endless length-bucketed batches in a seeded order (franq.fit.verifier.loop.batches), pass after pass."""
    from franq.fit.verifier.loop import batches

    rng = random.Random(seed)
    while True:
        yield from batches(pairs, batch_size, rng)


def main() -> None:
    import torch
    import torch.nn.functional as F
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from franq.fit.verifier.loop import _resume, _save

    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--half-batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=4e-5)
    ap.add_argument("--warmup", type=float, default=0.06)
    ap.add_argument("--kl-weight", type=float, default=1.0)
    ap.add_argument("--checkpoint-every", type=int, default=250)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--windows", action="store_true",
                    help="Also distil on every window of the ExpertQA training claims' passages (the windows "
                         "franq score reads, the deciding one and the others), paired with the claim.")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    log = logging.getLogger("lwf")
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    with lzma.open(args.pairs, "rt", encoding="utf-8") as f:
        train = json.load(f)["pairs"]["train"]
    contrast = train["contrast"]
    natural = [p for k in NATURAL for p in train[k]]
    if args.windows:
        from franq.verifier.windows import windows

        card = json.loads((V7 / "card.json").read_text(encoding="utf-8"))
        natural += [{"premise": w.text, "claim": p["claim"]} for p in train["expertqa"]
                    for w in windows(p["passages"], window_words=card["window_words"],
                                     overlap_sentences=card.get("window_overlap_sentences", 1))]
    log.info("%d contrastive pairs, %d natural pairs", len(contrast), len(natural))
    tok = AutoTokenizer.from_pretrained(V7)
    student = AutoModelForSequenceClassification.from_pretrained(V7, dtype=torch.float32)
    teacher = AutoModelForSequenceClassification.from_pretrained(V7, dtype=torch.float32).eval()
    opt = torch.optim.AdamW(student.parameters(), lr=args.lr, weight_decay=0.01)
    warm = max(1, int(args.warmup * args.steps))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm else max(0.0, (args.steps - s) / max(1, args.steps - warm)))
    run = {"name": "lwf", "pairs": args.pairs.name, "steps": args.steps, "half_batch": args.half_batch,
           "lr": args.lr, "kl_weight": args.kl_weight, "seed": args.seed,
           **({"windows": True} if args.windows else {})}
    start = _resume(args.out / "checkpoint.pt", run, student, opt, sched)
    cs, ns = stream(contrast, args.half_batch, args.seed), stream(natural, args.half_batch, args.seed + 1)
    for _ in range(start):  # the batches already trained on, skipped in order
        next(cs), next(ns)

    def enc(batch):
        return tok([p["premise"] for p in batch], [p["claim"] for p in batch], padding=True,
                   truncation="longest_first", max_length=160, return_tensors="pt")

    student.train()
    t0, log_ce, log_kl = time.time(), [], []
    for step in range(start, args.steps):
        cb, nb = [contrast[i] for i in next(cs)], [natural[i] for i in next(ns)]
        ce = F.cross_entropy(student(**enc(cb)).logits, torch.tensor([p["label"] for p in cb]))
        e = enc(nb)
        with torch.no_grad():
            target = F.log_softmax(teacher(**e).logits, -1)
        kl = F.kl_div(F.log_softmax(student(**e).logits, -1), target, log_target=True, reduction="batchmean")
        (ce + args.kl_weight * kl).backward()
        torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        log_ce.append(float(ce.detach()))
        log_kl.append(float(kl.detach()))
        if (step + 1) % 50 == 0:
            log.info("step %d/%d ce %.4f kl %.4f  %.2f s/step", step + 1, args.steps,
                         sum(log_ce[-50:]) / 50, sum(log_kl[-50:]) / 50, (time.time() - t0) / (step + 1 - start))
        if (step + 1) % args.checkpoint_every == 0 or step + 1 == args.steps:
            _save(args.out / "checkpoint.pt", run, step + 1, student, opt, sched)
            (args.out / "keep").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(args.out / "checkpoint.pt", args.out / "keep" / f"step-{step + 1:05d}.pt")


if __name__ == "__main__":
    main()
