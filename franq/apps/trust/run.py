"""``franq trust run``: every (question, condition, strategy) answered once, scored by FRANQ,
cached as one JSON line in ``<out>/answers.jsonl`` so that a rerun only does what is missing.

A row's key is (question id, condition, strategy, model, prompt version, max new tokens):
change any of them and the row is recomputed; kill the run and restart it and nothing done
is lost. The four strategies of one (question, condition) are generated as one batch.
FRANQ scores each answer's content (the ``Answer:`` line, citation markers removed) with
the same loaded model, in long form: per claim P_faithful, UQ_faith = p(c|x,r),
UQ_unfaith = p(c|x) and P(true); refusals and empty answers are not scored.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import franq
from franq.apps.trust import prompts

from .trust_metrics import answer_text, is_refusal

ANSWERS = "answers.jsonl"


KEY_FIELDS = ("id", "condition", "strategy", "model", "prompt_version", "max_new_tokens")
"""What identifies a row of ``answers.jsonl``."""
CONDITION_FIELDS = ("id", "condition", "question", "passages", "answers", "fake_answer", "gold_ids", "poison_ids",
                    "poison_ratio", "poison_actual", "distractors")
"""What every record of a conditions file (``franq trust build``) holds."""
ROW_FIELDS = (*KEY_FIELDS, "answer", *CONDITION_FIELDS[4:])
"""What every row ``franq trust report`` reads holds."""


def row_key(r: dict) -> tuple:
    return tuple(r[k] for k in KEY_FIELDS)


def require(records: Sequence, fields: Sequence[str], where: str) -> None:
    """One line naming the record and field for the first record that is not an object
    holding every one of ``fields`` (never a KeyError)."""
    for n, r in enumerate(records, 1):
        missing = [f for f in fields if f not in r] if isinstance(r, dict) else ["(not an object)"]
        if missing:
            raise franq.InputError(f"{where}, record {n}: no {missing[0]!r} field (each record needs "
                                   f"{', '.join(fields)})")
        passages = r.get("passages", [])
        bad = not isinstance(passages, list) or any(
            not isinstance(p, dict) or not isinstance(p.get("text"), str) or not isinstance(p.get("title"), str)
            for p in passages)
        if bad:
            raise franq.InputError(f"{where}, record {n}: 'passages' must be a list of {{title, text}} strings")


def load_rows(path: Path, fields: Sequence[str] = KEY_FIELDS) -> list[dict]:
    """Rows of a (possibly interrupted) run, each holding ``fields``; a torn line is dropped."""
    if not path.exists():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    require(rows, fields, str(path))
    return rows


def franq_fields(score) -> dict:
    """Answer-level FRANQ values from an :class:`franq.AnswerScore`: per claim, and the
    answer's P(true) (its least likely claim) and poisoning flag (its most suspicious claim:
    P_faithful * (1 - UQ_unfaith), faithful to the passages yet not what the model believes
    without them)."""
    claims = [{"text": c.claim.text, "p_faithful": c.p_faithful, "uq_faith": c.uq_faith, "uq_unfaith": c.uq_unfaith,
               "p_true_raw": c.p_true_raw, "p_true_calibrated": c.p_true_calibrated} for c in score.scored]
    if not claims:
        return {"franq_claims": [], "p_true_raw": None, "p_true_calibrated": None, "p_faithful": None,
                "uq_unfaith": None, "poison_flag": None}
    cal = [c["p_true_calibrated"] for c in claims if c["p_true_calibrated"] is not None]
    return {"franq_claims": claims, "p_true_raw": min(c["p_true_raw"] for c in claims),
            "p_true_calibrated": min(cal) if cal else None, "p_faithful": max(c["p_faithful"] for c in claims),
            "uq_unfaith": min(c["uq_unfaith"] for c in claims),
            "poison_flag": max(c["p_faithful"] * (1 - c["uq_unfaith"]) for c in claims)}


def run(records: Sequence[dict], *, generator, out_dir: str | Path, strategies: Sequence[str],
        franq_pipeline=None, franq_conditions: Sequence[str] | None = None, judge=None,
        progress: Callable | None = None) -> dict:
    """Answer, score and cache; returns counts (done before, computed now)."""
    require(records, CONDITION_FIELDS, "conditions")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / ANSWERS
    done = {row_key(r) for r in load_rows(path)}
    base = {"model": generator.name, "prompt_version": prompts.TRUST_VERSION,
            "max_new_tokens": generator.max_new_tokens}
    todo = []
    for rec in records:
        missing = [s for s in strategies if row_key({**rec, **base, "strategy": s}) not in done]
        if missing:
            todo.append((rec, missing))
    bar = progress(total=sum(len(m) for _, m in todo)) if progress else None
    computed = 0
    with path.open("a", encoding="utf-8") as fh:
        for rec, missing in todo:
            passages = [franq.Passage(p["text"], p["title"]) for p in rec["passages"]]
            t0 = time.perf_counter()
            texts = generator.generate([prompts.trust_messages(s, rec["question"], passages) for s in missing])
            gen_seconds = (time.perf_counter() - t0) / len(missing)
            judged = {}
            if judge is not None:
                items = [(rec["question"], rec["answers"], answer_text(t)) for t in texts]
                judged = {kind: judge.judge(kind, items) for kind in ("factuality", "robustness")}
            for k, (strategy, text) in enumerate(zip(missing, texts)):
                row = {"id": rec["id"], "condition": rec["condition"], "strategy": strategy, **base,
                       "poison_ratio": rec["poison_ratio"], "poison_actual": rec["poison_actual"],
                       "distractors": rec["distractors"], "question": rec["question"], "answers": rec["answers"],
                       "fake_answer": rec["fake_answer"], "gold_ids": rec["gold_ids"],
                       "poison_ids": rec["poison_ids"], "answer": text, "generate_seconds": round(gen_seconds, 3)}
                if judge is not None:
                    row.update(judge=judge.name, judge_factuality=judged["factuality"][k],
                               judge_robustness=judged["robustness"][k])
                content = answer_text(text)
                scored = (franq_pipeline is not None and content and not is_refusal(text)
                          and (franq_conditions is None or rec["condition"] in franq_conditions))
                if scored:
                    t0 = time.perf_counter()
                    row.update(franq_fields(franq_pipeline.score(rec["question"], passages, content, mode="long")))
                    row["franq_seconds"] = round(time.perf_counter() - t0, 3)
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                fh.flush()
                computed += 1
                if bar:
                    bar.update(1)
    if bar:
        bar.close()
    return {"cached": len(done), "computed": computed, "path": str(path)}
