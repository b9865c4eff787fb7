"""Scale-out runner for ``franq score --runner ray``: Ray Data ``map_batches`` over an
actor pool, one loaded :class:`~franq.pipeline.Franq` per actor.

Optional: ``pip install 'franq[ray]'``. The driver still reads, validates, de-duplicates
and writes (see :mod:`franq.runners.local`); only valid records travel to the actors, as JSON
text, in windows of ``window`` records (bounded memory; one Ray dataset per window, so
a window's actors load the model once and score ``window`` records). Results come back
block by block (not in input order: the output is keyed by id) and are appended as
each block arrives.

On one machine no cluster is needed (``ray.init`` starts a local one). On a cluster, run
the same command on the head node with ``--ray-address auto`` (see docs/batch.md).
"""
from __future__ import annotations

import json
import logging
from collections.abc import Iterator

from franq.config import FranqConfig
from franq.errors import FranqError
from franq.io import parse_example
from franq.runners.base import BATCH_TOKENS, Scored, score_batches
from franq.runners.records import BadRecord, Record

log = logging.getLogger(__name__)

WINDOW = 4096


def _example_json(record: Record) -> str:
    """The validated example as an input line again (claim labels, record labels and ``meta``
    included: the unknown fields and documents' metadata the reader kept there travel too)."""
    ex = record.example
    claims = None
    if ex.claims is not None:
        labels = ex.claim_labels or [{}] * len(ex.claims)
        claims = [{"text": text, **label} for text, label in zip(ex.claims, labels)]
    return json.dumps({"id": record.id, "question": ex.question, "answer": ex.answer,
                       "passages": [{"title": p.title, "text": p.text} for p in ex.passages],
                       "claims": claims, **(ex.labels or {}),
                       **({"meta": ex.meta} if ex.meta is not None else {})}, ensure_ascii=False)


class FranqActor:
    """A Ray Data callable class: loads one :class:`Franq` and scores batches of records.

    A batch is ``{"line", "id", "record"}`` (record = JSON text); the result adds
    ``"kind"`` (``"scored"`` or ``"error"``), ``"payload"`` (output line or reason) and
    ``"n_claims"``, one row per input row, in order.
    """

    def __init__(self, config: dict, threads: int = 1, batch_tokens: int = BATCH_TOKENS):
        from franq.pipeline import Franq

        cfg = FranqConfig.from_dict(config)
        if cfg.model.threads is None:  # [model] threads (or --threads) first, else the worker's CPUs
            cfg = cfg.with_overrides({"model.threads": threads})
        self.franq = Franq.from_config(cfg)
        self.batch_tokens = batch_tokens

    def __call__(self, batch: dict) -> dict:
        records = [Record(int(line), str(ident), parse_example(json.loads(text), limits=self.franq.config.limits))
                   for line, ident, text in zip(batch["line"], batch["id"], batch["record"])]
        outcomes = [o for group in score_batches(self.franq, records, batch_tokens=self.batch_tokens)
                    for o in group]
        return {
            "line": [o.line for o in outcomes],
            "id": [o.id for o in outcomes],
            "kind": ["scored" if isinstance(o, Scored) else "error" for o in outcomes],
            "payload": [o.json if isinstance(o, Scored) else o.reason for o in outcomes],
            "n_claims": [o.n_claims if isinstance(o, Scored) else 0 for o in outcomes],
        }


class RayRunner:
    """Scores records on ``workers`` Ray actors (``gpus_per_worker`` GPUs each)."""

    def __init__(self, config: FranqConfig, *, workers: int = 2, cpus_per_worker: float = 1.0,
                 gpus_per_worker: float = 0.0, address: str | None = None,
                 batch_tokens: int = BATCH_TOKENS, answers_per_call: int = 16, window: int = WINDOW):
        try:
            import ray
        except ImportError:
            raise FranqError("runner 'ray': Ray is not installed; run `pip install 'franq[ray]'`") from None
        self.ray = ray
        self.config = config.to_dict()
        self.workers = workers
        self.cpus_per_worker = cpus_per_worker
        self.gpus_per_worker = gpus_per_worker
        self.batch_tokens = batch_tokens
        self.answers_per_call = answers_per_call
        self.window = window
        if not ray.is_initialized():
            if address:
                ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
            else:
                # one CPU beyond the actors' for Ray Data's own tasks
                ray.init(num_cpus=int(workers * max(cpus_per_worker, 1)) + 1,
                         include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
            logging.getLogger("ray.data").setLevel(logging.WARNING)
            ray.data.DataContext.get_current().enable_progress_bars = False

    def run(self, records: Iterator[Record]) -> Iterator[list[Scored | BadRecord]]:
        window: list[Record] = []
        for record in records:
            window.append(record)
            if len(window) >= self.window:
                yield from self._run_window(window)
                window = []
        if window:
            yield from self._run_window(window)

    def _run_window(self, window: list[Record]) -> Iterator[list[Scored | BadRecord]]:
        # Small calls (about 4 per actor, at most answers_per_call answers), one block each, and
        # one call in flight per actor: an actor that comes up first must not queue the work
        # of one that is still loading its model.
        per_call = max(1, min(self.answers_per_call, -(-len(window) // (4 * self.workers))))
        ds = self.ray.data.from_items(
            [{"line": r.line, "id": r.id, "record": _example_json(r)} for r in window],
            override_num_blocks=-(-len(window) // per_call))
        ds = ds.map_batches(
            FranqActor, batch_size=per_call,
            compute=self.ray.data.ActorPoolStrategy(size=self.workers, max_tasks_in_flight_per_actor=1),
            num_cpus=self.cpus_per_worker, num_gpus=self.gpus_per_worker or None,
            fn_constructor_kwargs={"config": self.config, "threads": max(int(self.cpus_per_worker), 1),
                                   "batch_tokens": self.batch_tokens})
        for batch in ds.iter_batches(batch_size=None, batch_format="numpy", prefetch_batches=0):
            out: list[Scored | BadRecord] = []
            for line, ident, kind, payload, n in zip(batch["line"], batch["id"], batch["kind"],
                                                     batch["payload"], batch["n_claims"]):
                if kind == "scored":
                    out.append(Scored(int(line), str(ident), str(payload), int(n)))
                else:
                    out.append(BadRecord(int(line), str(ident), str(payload)))
            yield out
