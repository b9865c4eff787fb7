"""Runners: score many records from files, in this process or on Ray.

    records.py   JSONL in and out: read and validate lines, ids, error records, crash-safe output
    paths.py     input, output, error and recovery files are different files; streams vs files
    base.py      the Runner contract, Scored, scoring records in token-bounded batches
    local.py     ``franq score IN.jsonl``: the resumable run, the local runner, runner choice
    ray.py       the Ray Data runner (``pip install 'franq[ray]'``)

Imports point one way: local.py and ray.py import base.py and records.py, never each other
at module level (local.py imports ray.py only when ``--runner ray`` is chosen). The scoring
path (:mod:`franq.pipeline`) does not import this package.
"""
