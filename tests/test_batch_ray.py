"""``franq score --runner ray``: the same records scored on 2 local Ray Data actors give
the same output lines as the local runner. Skipped when Ray is not installed."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from franq.cli import main

ray = pytest.importorskip("ray", reason="Ray is optional: pip install 'franq[ray]'")
pytestmark = pytest.mark.ray


def test_ray_engine_on_two_local_workers_matches_local_engine(tmp_path, tiny_lm_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(__import__("pathlib").Path(__file__).resolve().parents[1]))
    records = [{"id": f"r{i}", "question": f"Where is tower {i}?", "passages": [f"Tower {i} is in Paris."],
                "answer": f"Tower {i} is in Paris. It was built in {1880 + i}."} for i in range(6)]
    lines = [json.dumps(r) for r in records]
    lines.insert(3, json.dumps({"id": "bad", "question": "q", "passages": [3], "answer": "a"}))
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n")
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"model": {"path": str(tiny_lm_path), "device": "cpu"}}))
    runner = CliRunner()
    local = runner.invoke(main, ["score", str(src), "-o", str(tmp_path / "local.jsonl"), "--config", str(cfg), "--quiet"])
    try:
        on_ray = runner.invoke(main, ["score", str(src), "-o", str(tmp_path / "ray.jsonl"), "--config", str(cfg),
                                      "--quiet", "--runner", "ray", "--workers", "2"])
    finally:
        ray.shutdown()
    assert local.exit_code == 0 and on_ray.exit_code == 0, on_ray.output

    def by_id(name):
        return {r["id"]: r for r in map(json.loads, (tmp_path / name).read_text().splitlines())}

    a, b = by_id("local.jsonl"), by_id("ray.jsonl")
    assert set(a) == set(b) == {r["id"] for r in records}
    for ident in a:
        assert [c["p_true_raw"] for c in b[ident]["claims"]] == pytest.approx(
            [c["p_true_raw"] for c in a[ident]["claims"]], abs=1e-5)
    assert (tmp_path / "ray.jsonl.errors.jsonl").read_text() == (tmp_path / "local.jsonl.errors.jsonl").read_text()
    assert "scored 6 answers" in on_ray.stderr and "1 bad records" in on_ray.stderr
