"""The verifier's fine-tuning loop, resumable: every ``checkpoint_every`` steps the model,
optimiser, schedule and step are written to ``OUT/checkpoint.pt``; a run started again with
the same pairs and settings goes on from there (the batches are a fixed, seeded order, so
the steps already done are skipped, not redrawn). A long CPU run can thus continue in the
next session; on a GPU (``device="cuda"``) the same recipe runs in minutes.

``keep``: a folder where a copy of every checkpoint stays (``step-NNNNN.pt``), to compare
checkpoints on dev sets; ``stop``: end after that step of the plan (the schedule still runs
over the whole plan, so a run stopped at step N is step N of the full run: how a recipe keeps
the checkpoint it chose; a kept ``step-N.pt`` copied to ``OUT/checkpoint.pt`` finishes it at once).

The checkpoint records what it belongs to (the recipe's name, the pair count and the
settings); a checkpoint of another run is refused in one line, never trained on.
"""
from __future__ import annotations

import logging
import math
import random
import shutil
import time
from pathlib import Path

import numpy as np

from franq.errors import InputError

log = logging.getLogger(__name__)
CHECKPOINT = "checkpoint.pt"


def batches(pairs: list[dict], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Length-bucketed batches in a seeded order (less padding, same data every run)."""
    order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i]["premise"]) + len(pairs[i]["claim"]), i))
    chunks = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    rng.shuffle(chunks)
    return chunks


def schedule(pairs: list[dict], *, epochs: float, batch_size: int, seed: int) -> list[list[int]]:
    """Every step's batch for ``epochs`` passes (a fractional last pass takes its first part)."""
    rng = random.Random(seed)
    out: list[list[int]] = []
    for e in range(math.ceil(epochs)):
        b = batches(pairs, batch_size, rng)
        out += b if e + 1 <= epochs else b[: int(len(b) * (epochs - e))]
    return out


def train(model, tokenizer, pairs: list[dict], *, epochs: float, batch_size: int, lr: float, warmup: float,
          seed: int, max_length: int, out: Path, run_id: dict, device: str = "cpu", checkpoint_every: int = 200,
          log_every: int = 50, keep: Path | None = None, stop: int | None = None) -> dict:
    """Fine-tune ``model`` in place on ``pairs`` (premise, claim, label); returns
    ``{"steps", "planned_steps", "resumed_from", "train_seconds"}``. ``run_id`` identifies the
    run in its checkpoint (recipe name, settings, pair count); ``keep``, ``stop``: as above."""
    import torch

    steps_plan = schedule(pairs, epochs=epochs, batch_size=batch_size, seed=seed)
    steps = len(steps_plan)
    if stop is not None and not 0 < stop <= steps:
        raise InputError(f"fit verifier: stop {stop} is outside the plan's 1..{steps} steps")
    last = stop or steps
    run_id = {**run_id, "pairs": len(pairs), "steps": steps, "epochs": epochs, "batch_size": batch_size, "lr": lr}
    model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    warm = max(1, int(warmup * steps))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm else max(0.0, (steps - s) / max(1, steps - warm)))
    start = _resume(out / CHECKPOINT, run_id, model, opt, sched)
    if start > last:
        raise InputError(f"fit verifier: {out / CHECKPOINT} is at step {start}, past the stop at step {last}: "
                         "remove it or write to another folder")
    model.train()
    t0, seen, running = time.time(), 0, []
    for step in range(start, last):
        batch = [pairs[i] for i in steps_plan[step]]
        enc = tokenizer([p["premise"] for p in batch], [p["claim"] for p in batch], padding=True,
                        truncation="longest_first", max_length=max_length, return_tensors="pt")
        enc = {k: v.to(device) for k, v in enc.items()}
        loss = model(**enc, labels=torch.tensor([p["label"] for p in batch], device=device)).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        seen += len(batch)
        running.append(float(loss.detach()))
        if (step + 1) % log_every == 0 or step + 1 == last:
            log.info("step %d/%d loss %.4f  %.1f pairs/s", step + 1, steps, np.mean(running[-log_every:]),
                     seen / max(1e-9, time.time() - t0))
        if checkpoint_every and (step + 1) % checkpoint_every == 0 and step + 1 < last:
            _save(out / CHECKPOINT, run_id, step + 1, model, opt, sched)
            if keep is not None:
                Path(keep).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(out / CHECKPOINT, Path(keep) / f"step-{step + 1:05d}.pt")
    model.cpu()
    return {"steps": last, "planned_steps": steps, "resumed_from": start, "train_seconds": round(time.time() - t0)}


def _save(path: Path, run_id: dict, step: int, model, opt, sched) -> None:
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save({"run": run_id, "step": step, "model": model.state_dict(), "opt": opt.state_dict(),
                "sched": sched.state_dict()}, tmp)
    tmp.replace(path)  # never a half-written checkpoint
    log.info("checkpoint at step %d: %s", step, path)


def _resume(path: Path, run_id: dict, model, opt, sched) -> int:
    """The step to start from: 0 with no checkpoint, else the checkpoint's (same run only)."""
    import torch

    if not path.is_file():
        return 0
    state = torch.load(path, map_location="cpu", weights_only=True)
    if state.get("run") != run_id:
        raise InputError(f"fit verifier: {path} is a checkpoint of another run ({state.get('run')}); "
                         f"this run is {run_id}: remove it or write to another folder")
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    sched.load_state_dict(state["sched"])
    log.info("resuming from step %d (%s)", state["step"], path)
    return int(state["step"])


def finished(out: Path) -> None:
    """Remove the checkpoint once the verifier is written (a finished run needs none)."""
    (out / CHECKPOINT).unlink(missing_ok=True)
