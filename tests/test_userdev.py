"""The hand-written user-style dev sets (datasets/userdev, datasets/userdev2) parse and keep their promises:
labels and kinds from the allowed sets, every claim in its answer, the minimum counts."""
import json
from collections import Counter
from pathlib import Path

import pytest

DATASETS = Path(__file__).resolve().parents[1] / "datasets"
LABELS = {"supported", "contradicted", "not_mentioned_true", "not_mentioned_false"}
KINDS = {"name_swap", "comparison_swap", "number", "date_year", "negation", "condition_reversed", "scope",
         "role_swap"}
# Each set's promises: answers, answers without passages, answers with >= 3 passages, claims of each kind,
# bounds on the supported and contradicted shares, domains.
MINIMUMS = {
    "userdev": {"answers": 60, "no_passages": 5, "three_passages": 1, "kind": 8, "supported": (0.35, 0.55),
                "contradicted": (0.18, 0.32), "domains": 8},
    "userdev2": {"answers": 50, "no_passages": 5, "three_passages": 10, "kind": 6, "supported": (0.38, 0.50),
                 "contradicted": (0.20, 0.30), "domains": 10},
}


def _rows(name):
    text = (DATASETS / name / "answers.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("name", sorted(MINIMUMS))
def test_records_are_well_formed(name):
    rows = _rows(name)
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


@pytest.mark.parametrize("name", sorted(MINIMUMS))
def test_counts_meet_the_minimums(name):
    want = MINIMUMS[name]
    rows = _rows(name)
    claims = [c for r in rows for c in r["claims"]]
    labels = Counter(c["label"] for c in claims)
    kinds = Counter(c["kind"] for c in claims if c["label"] == "contradicted")
    assert len(rows) >= want["answers"]
    assert sum(1 for r in rows if not r["passages"]) >= want["no_passages"]
    assert sum(1 for r in rows if len(r["passages"]) >= 3) >= want["three_passages"]
    assert set(kinds) == KINDS and min(kinds.values()) >= want["kind"], kinds
    share = {k: v / len(claims) for k, v in labels.items()}
    assert want["supported"][0] <= share["supported"] <= want["supported"][1], share
    assert want["contradicted"][0] <= share["contradicted"] <= want["contradicted"][1], share
    assert share["not_mentioned_true"] >= 0.10 and share["not_mentioned_false"] >= 0.10, share
    assert len({r["domain"] for r in rows}) >= want["domains"]
