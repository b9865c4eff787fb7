"""``franq bench faithfulness-sets``: every faithfulness backend on every held-apart dev set
of the verifier, so that the default is chosen on several sets, never one.

Dev sets (none used to fit anything shipped; built by :mod:`franq.fit.verifier.data`):

``expertqa``            ExpertQA rand_test claims (support labels), against all of the
                        answer's passages; ``[n]`` citation markers stripped (a cue, not a
                        method: they mark supported claims), and ``expertqa+cites`` with them
``wice``                WiCE held-out 40% (whole cited pages, long)
``synthetic-nq``        synthetic claims from nq-open test questions' gold passages
``synthetic-expertqa``  synthetic claims from ExpertQA rand_test passages
``nq-qa``               "question answer" statements on nq-open test questions
``snli``                1,500 SNLI dev pairs

Binary target everywhere: supported vs not (contradicted or not mentioned). Metrics: BAcc at
P_faithful = 0.5, AUROC, ms per pair (wall clock, one torch thread). The text backends run on
every pair; the backends that read the LM passes (context_pmi, lookback, hidden_probe) run through
the pipeline with the embedded model on the first ``lm_pairs`` of each set.
"""
from __future__ import annotations

import datetime
import json
import platform
import random
import time
from pathlib import Path

import numpy as np

from franq.evaluation.metrics import auroc, balanced_accuracy

PAIR_SETS = ("synthetic-nq", "synthetic-expertqa", "nq-qa", "nq-declarative", "snli")
TEXT_BACKENDS = ("lexical", "combined", "verifier")
LM_BACKENDS = ("context_pmi", "lookback", "hidden_probe")


def write_dev_sets(raw: Path, datasets: Path, manifest_path: Path, out: Path, *, seed: int = 0,
                   names: tuple[str, ...] = PAIR_SETS) -> None:
    """Build the pair dev sets ``names`` once (the same pairs ``franq fit verifier`` reports on
    for the same manifest and seed) and keep them in ``out`` (datasets/verifier/dev)."""
    from franq.fit.verifier.data import build

    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    dev = build(raw, datasets, manifest, seed=seed)["dev"]
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        with open(out / f"{name}.jsonl", "w", encoding="utf-8") as f:
            for p in dev[name]:
                f.write(json.dumps({k: p[k] for k in ("premise", "claim", "label", "how")}, ensure_ascii=False) + "\n")


def load_sets(datasets: Path, dev_dir: Path, *, limit: int | None = None, seed: int = 0) -> dict[str, list[dict]]:
    """{set: [{"context", "claim", "supported"}]}: the pair sets from ``dev_dir`` and the
    ExpertQA / WiCE held-out claims against all their passages, joined as franq joins them."""
    from franq.fit.verifier.data import CITATION_RE

    sets: dict[str, list[dict]] = {}
    for name in PAIR_SETS:
        path = dev_dir / f"{name}.jsonl"
        if path.exists():
            rows = [json.loads(x) for x in open(path, encoding="utf-8")]
            sets[name] = [{"context": r["premise"], "claim": r["claim"], "supported": r["label"] == 0,
                           "question": ""} for r in rows]
    from franq.evaluation.data import expertqa_held_out

    wice = [json.loads(x) for x in open(datasets / "wice" / "heldout.jsonl", encoding="utf-8")]
    for name, records in (("expertqa", expertqa_held_out(datasets)), ("wice", wice)):
        rows = []
        for rec in records:
            context = "\n\n".join(p["text"] for p in rec["passages"])
            for c in rec["claims"]:
                if c.get("is_faithful") is not None:
                    rows.append({"context": context, "claim": c["text"], "supported": bool(c["is_faithful"]),
                                 "question": rec["question"], "passages": rec["passages"]})
        if name == "expertqa":
            rows = random.Random(seed).sample(rows, min(len(rows), 500))
            sets["expertqa+cites"] = rows
            rows = [dict(r, claim=CITATION_RE.sub("", r["claim"]).strip()) for r in rows]
        sets[name] = rows
    if limit:
        sets = {k: v[:limit] for k, v in sets.items()}
    return sets


def text_scorer(name: str, config):
    """``rows -> (P_faithful, ms per pair)`` of text backend ``name``, built (loaded) once."""
    from franq.lm.load import EMBEDDED_NAME
    from franq.registry import build

    class Named:  # the text backends read only the model's name (combined's map is fitted per model)
        name = EMBEDDED_NAME

    backend = build("faithfulness", name, config, Named())

    def score(rows: list[dict]) -> tuple[np.ndarray, float]:
        pairs = [(r["context"], r["claim"]) for r in rows]
        t = time.perf_counter()
        p = np.asarray(backend.predict(pairs), dtype=float)
        return p, 1000 * (time.perf_counter() - t) / max(1, len(pairs))
    score.stack = getattr(backend, "name", name)  # e.g. verifier:<model>:<aggregation>[:slots]
    return score


def lm_scorer(name: str, config):
    """``rows -> (P_faithful, ms per pair)`` from the pipeline with backend ``name`` (its LM
    passes included in the time), the pipeline built once."""
    import franq

    pipeline = franq.Franq.from_config(config.with_overrides({"faithfulness.name": name}))

    def score(rows: list[dict]) -> tuple[np.ndarray, float]:
        examples = [{"question": r["question"] or "Is this true?", "passages": [r["context"][:6000]],
                     "answer": r["claim"], "claims": [r["claim"]]} for r in rows]
        t = time.perf_counter()
        out = [a.claims[0].p_faithful for a in pipeline.score_many(examples)]
        return np.asarray(out, dtype=float), 1000 * (time.perf_counter() - t) / max(1, len(rows))
    return score


def run(datasets: Path, dev_dir: Path, *, backends=TEXT_BACKENDS, lm_backends=(), lm_pairs: int = 100,
        limit: int | None = None, only: tuple[str, ...] = (), out: Path | None = None,
        command: str = "franq bench faithfulness-sets") -> str:
    import franq
    from franq.lm.threads import configure_threads

    configure_threads(1)  # the text backends; the pipelines of lm_scorer keep [model] threads = 1
    sets = load_sets(datasets, dev_dir, limit=limit)
    if only:
        sets = {k: v for k, v in sets.items() if k in only}
    config = franq.FranqConfig.from_dict({"model": {"threads": 1}})
    rows, means, stacks = [], {}, {}
    for b in (*backends, *lm_backends):
        try:
            score = (text_scorer if b in backends else lm_scorer)(b, config)
        except Exception as exc:  # noqa: BLE001 - a backend that cannot run here is reported, not fatal
            rows += [f"| {b} | {s} | - | not run | | | {str(exc).splitlines()[0][:90]} |" for s in sets]
            continue
        stacks[b] = getattr(score, "stack", b)
        for s, data in sets.items():
            sub = data if b in backends else data[:lm_pairs]
            y = np.array([r["supported"] for r in sub])
            try:
                p, ms = score(sub)
            except Exception as exc:  # noqa: BLE001 - as above, per set
                rows.append(f"| {b} | {s} | {len(sub)} | not run | | | {str(exc).splitlines()[0][:90]} |")
                continue
            bacc, auc = balanced_accuracy(p, y.astype(int)), float(auroc(p, y.astype(int)))
            if s != "expertqa+cites":
                means.setdefault(b, []).append((bacc, auc))
            rows.append(f"| {b} | {s} | {len(sub)} | {bacc:.3f} | {auc:.3f} | {ms:.1f} | {y.mean():.0%} supported |")
    summary = ["| backend | sets | mean BAcc | mean AUROC |", "|---|---|---|---|"]
    for b, v in sorted(means.items(), key=lambda kv: -np.mean([x[1] for x in kv[1]])):
        summary.append(f"| {b} | {len(v)} | {np.mean([x[0] for x in v]):.3f} | {np.mean([x[1] for x in v]):.3f} |")
    report = "\n".join([
        f"Run {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on {platform.node()} "
        "(2-core CPU shared with other jobs; one torch thread; timings noisy).",
        f"Command: `{command}`", "",
        "Backends as configured by default: " + ", ".join(f"{b} = `{n}`" for b, n in stacks.items()) + ".", "",
        "Mean over the dev sets (expertqa+cites left out of the mean: its citation markers are a cue):", "",
        *summary, "", "| backend | dev set | pairs | BAcc @0.5 | AUROC | ms/pair | note |", "|---|---|---|---|---|---|---|",
        *rows])
    print(report)
    if out:
        Path(out).write_text(report + "\n", encoding="utf-8")
    return report
