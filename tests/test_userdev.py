"""The hand-written user-style dev set (datasets/userdev) parses and keeps its promises:
labels and kinds from the allowed sets, every claim in its answer, the minimum counts."""
import json
from collections import Counter
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "datasets" / "userdev" / "answers.jsonl"
LABELS = {"supported", "contradicted", "not_mentioned_true", "not_mentioned_false"}
KINDS = {"name_swap", "comparison_swap", "number", "date_year", "negation", "condition_reversed", "scope",
         "role_swap"}


def _rows():
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_records_are_well_formed():
    rows = _rows()
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    for r in rows:
        assert set(r) >= {"id", "domain", "question", "passages", "answer", "claims"}, r["id"]
        assert r["question"].strip() and r["domain"].strip(), r["id"]
        assert len(r["passages"]) <= 4, r["id"]
        for p in r["passages"]:
            assert p["title"].strip(), r["id"]
            assert 40 <= len(p["text"].split()) <= 400, (r["id"], p["title"])
        assert 2 <= len(r["claims"]) <= 6, r["id"]
        assert r["answer"] == " ".join(c["text"] for c in r["claims"]), r["id"]
        for c in r["claims"]:
            assert c["text"] in r["answer"], (r["id"], c["text"])
            assert c["label"] in LABELS, (r["id"], c["label"])
            if c["label"] == "contradicted":
                assert c.get("kind") in KINDS, (r["id"], c["text"])
            else:
                assert "kind" not in c, (r["id"], c["text"])
            if not r["passages"]:
                assert c["label"].startswith("not_mentioned"), (r["id"], c["text"])


def test_counts_meet_the_minimums():
    rows = _rows()
    claims = [c for r in rows for c in r["claims"]]
    labels = Counter(c["label"] for c in claims)
    kinds = Counter(c["kind"] for c in claims if c["label"] == "contradicted")
    assert len(rows) >= 60
    assert sum(1 for r in rows if not r["passages"]) >= 5
    assert any(len(r["passages"]) >= 3 for r in rows)
    assert set(kinds) == KINDS and min(kinds.values()) >= 8, kinds
    share = {k: v / len(claims) for k, v in labels.items()}
    assert 0.35 <= share["supported"] <= 0.55, share
    assert 0.18 <= share["contradicted"] <= 0.32, share
    assert share["not_mentioned_true"] >= 0.10 and share["not_mentioned_false"] >= 0.10, share
    assert len({r["domain"] for r in rows}) >= 8
