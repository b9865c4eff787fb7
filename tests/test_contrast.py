"""Contrastive verifier pairs (issue 44, item 1): every edit kind changes its slot and its
supported twin keeps it, not-mentioned pairs are never contradicted, held-out documents stay
out, dev is apart by document, and balancing leaves the cues near chance."""
from __future__ import annotations

import gzip
import json
import random
import re

import pytest

from franq.fit.verifier import contrast, edits
from franq.fit.verifier.balance import balance, cue_baseline
from franq.fit.verifier.contrast import Builder, contrastive_pairs, documents, entity_spans

CASES = {  # sentence, (start, end, label) entities, kind, (slot in the sentence, slot that must replace it)
    "number-x10": ("The bridge is 120 meters long and crosses the river.", [], "120", "1200"),
    "number-div10": ("The bridge is 120 meters long and crosses the river.", [], "120", "12"),
    "number-pm1": ("The team won 7 games in a row that spring.", [], "7", r"6|8"),
    "number-unit": ("The upload times out after 30 seconds on slow links.", [], "seconds", r"minutes|hours|days"),
    "year-pm1": ("The company was founded in 1989 by two engineers.", [], "1989", r"1988|1990"),
    "year-other": ("The company was founded in 1989 by two engineers.", [], "1989",
                   r"(?!1989)(?:1[5-9]\d\d|20[0-3]\d)"),
    "date-month": ("The treaty was signed on March 3, 1921 in the capital.", [], "March",
                   r"(?!March)(?:" + "|".join(edits.MONTHS) + ")"),
    "comparative": ("The northern lake is larger than the one beside the town.", [], "larger", "smaller"),
    "order": ("The vote was held before the final report was published.", [], "before", "after"),
    "negation": ("The function is safe to call from several threads.", [], "is", "is not"),
    "modal": ("The parser always returns a list of tokens to the caller.", [], "always", "never"),
    "condition": ("The service can be restarted without losing its queued jobs.", [], "without", "with"),
    "scope": ("All members of the council voted for the new budget plan.", [], "All", "Only some"),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_every_word_and_number_kind_changes_its_slot(kind):
    text, ents, slot, new = CASES[kind]
    found = dict(edits.edits(text, ents, {}, {}, random.Random(0)))
    assert kind in found, f"{kind} not made from {text!r}: {sorted(found)}"
    edited = found[kind]
    assert edited != text and slot in text
    assert len(re.findall(rf"\b(?:{new})\b", edited)) > len(re.findall(rf"\b(?:{new})\b", text)), (kind, edited)


def test_entity_kinds_swap_a_same_type_name():
    text = "Marie Curie shared the prize with Pierre Curie in Paris."
    ents = [(0, 11, "PERSON"), (34, 46, "PERSON"), (50, 55, "GPE")]
    window = {"PERSON": ["Henri Becquerel"], "GPE": ["Warsaw"]}
    pool = {"PERSON": [f"Person {c}" for c in "ABCDEFG"], "GPE": ["Lyon", "Berlin"]}
    found = dict(edits.edits(text, ents, window, pool, random.Random(1)))
    assert any(x in found["entity-window"] for x in ("Henri Becquerel", "Warsaw"))
    assert any(x in found["entity-other"] for x in ("Person", "Lyon", "Berlin"))
    roles = dict(edits.edits("Napoleon Bonaparte defeated Franz Weyrother at Austerlitz.",
                             [(0, 18, "PERSON"), (28, 43, "PERSON")], {}, {}, random.Random(0)))
    assert roles["roles"].startswith("Franz Weyrother defeated Napoleon Bonaparte")


def test_paraphrase_keeps_the_slots_and_says_it_otherwise():
    rng = random.Random(0)
    text = "In 1989, the wall was built by Erich Honecker, which surprised many."
    seen = set()
    for _ in range(20):
        p, rules = edits.paraphrase(text, rng)
        assert "1989" in p and "Honecker" in p
        seen.update(rules)
        if rules:
            assert p != text
    assert {"reorder", "voice"} <= seen
    assert edits.voice("The novel was written by Jane Austen in 1813.") == \
        "Jane Austen wrote the novel in 1813."
    assert edits.number_words("The team has 3 players left.") == "The team has three players left."
    dropped = edits.drop_clause("The river (the longest in Europe) floods every spring.")
    assert dropped == "The river floods every spring."


def test_generalize_says_a_slot_less_precisely_and_its_wrong_side_falsely():
    text = "The bridge opened in 1932 after 120 workers built it."
    said = {edits.generalize(text, random.Random(i)) for i in range(8)}
    wrong = {edits.generalize(text, random.Random(i), wrong=True) for i in range(8)}
    assert said == {("number-bound", "The bridge opened in 1932 after more than 100 workers built it."),
                    ("year-decade", "The bridge opened in the 1930s after 120 workers built it.")}
    assert ("number-bound", "The bridge opened in 1932 after more than 1000 workers built it.") in wrong
    assert wrong & {("year-decade", "The bridge opened in the 1920s after 120 workers built it."),
                    ("year-decade", "The bridge opened in the 1940s after 120 workers built it.")}
    assert edits.generalize("About 300 people live there.", random.Random(0)) is None
    window = edits.window_numbers("It cost 40 dollars in 1990.", ["A ticket was 25 dollars in 1995."],
                                  random.Random(0))
    assert dict(window) == {"year-window": "It cost 40 dollars in 1995.", "number-window": "It cost 25 dollars in 1990."}


DOC = ["The Lanter Bridge opened in 1932 after four years of work.",
       "It is 120 meters long and carries two lanes of traffic.",
       "The bridge was designed by Anna Keller, an engineer from Basel.",
       "Its main span is larger than the span of the older Rhine crossing.",
       "Tolls were never charged on the bridge before the war.",
       "All trucks must use the lower deck during the winter months."]


def fixture_docs(n: int = 40) -> list[list[str]]:
    return [[s.replace("Lanter", f"Lanter{d}").replace("Keller", f"Keller{d}") for s in DOC] for d in range(n)]


def test_builder_pairs_are_valid_twins_edits_and_not_mentioned():
    docs = fixture_docs(30)
    ents = entity_spans(sorted({s for d in docs for s in d}))
    pairs = Builder(docs, ents, "fixture", random.Random(0)).build(6)
    assert {"premise", "claim", "label", "source", "kind", "layout"} <= set(pairs[0])
    labels = {p["label"] for p in pairs}
    assert labels == {0, 1, 2}
    assert all(len(p["premise"].split()) <= contrast.LONG_WORDS + 45 for p in pairs)
    by_premise = {}
    for p in pairs:
        by_premise.setdefault((p["premise"], p["kind"]), []).append(p)
        if p["label"] == 2:
            assert p["kind"].startswith("nm-")
        else:
            assert not p["kind"].startswith("nm-")
    for p in pairs:
        if p["label"] == 1:  # its twin: same premise and kind, supported, a different claim
            twins = [t for t in by_premise[(p["premise"], p["kind"])] if t["label"] == 0]
            assert twins and all(t["claim"] != p["claim"] for t in twins)
            if p["kind"].startswith(("number", "year")) and p["kind"] not in ("number-unit", "number-bound",
                                                                                "year-decade"):
                digits = lambda t: set(re.findall(r"\d+", re.sub(  # noqa: E731
                    r"\b(%s)\b" % "|".join(edits.WORDNUM), lambda m: str(edits.WORDNUM[m.group()]), t)))
                twin_nums = digits(twins[0]["claim"])
                assert twin_nums <= digits(p["premise"]), twins[0]["claim"]
                assert set(re.findall(r"\d+", p["claim"])) != twin_nums
    removed = [p for p in pairs if p["kind"] == "nm-removed" and p["layout"] != "answer"]
    assert removed
    for p in removed:  # the deciding sentence is gone from the premise
        assert not any(s in p["premise"] for s in DOC[:0])
    kinds = {p["kind"] for p in pairs}
    assert {"number-x10", "year-pm1", "comparative", "modal", "scope", "nm-added"} <= kinds
    assert "answer" in {p["layout"] for p in pairs} and "long" in {p["layout"] for p in pairs}


def test_added_places_false_makes_no_appended_place_claims():
    places = ["Vienna", "Lisbon", "Oslo"]
    docs = fixture_docs(30) + [[f"{c} is a large city on a river with many old bridges."] for c in places]
    texts = sorted({s for d in docs for s in d})
    ents = {t: edits.proper_spans(t) for t in texts} | {d[0]: [(0, len(c), "GPE")] for c, d in zip(places, docs[30:])}
    tails = tuple(f" in {c}." for c in places)

    def appended(added_places):
        pairs = Builder(docs, ents, "fixture", random.Random(0), added_places=added_places).build(6)
        return [p for p in pairs if p["kind"] == "nm-added" and p["claim"].endswith(tails)], pairs

    with_places, _ = appended(True)
    without, pairs = appended(False)
    assert with_places and all(p["label"] == 2 for p in with_places)
    assert not without and any(p["kind"] == "nm-added" for p in pairs)  # the other added details stay


def test_dev_is_apart_by_document_and_the_build_is_deterministic():
    docs = {"fixture": fixture_docs(120)}
    a = contrastive_pairs(None, None, docs=docs, nlp=None, balanced=False, seed=3)
    b = contrastive_pairs(None, None, docs=docs, nlp=None, balanced=False, seed=3)
    assert a == b and a["dev"] and a["train"]
    mark = re.compile(r"(?:Lanter|Keller)(\d+)")
    train_docs = {m for p in a["train"] for m in mark.findall(p["premise"])}
    dev_docs = {m for p in a["dev"] for m in mark.findall(p["premise"])}
    assert train_docs and dev_docs and not train_docs & dev_docs


def test_balance_leaves_the_cues_near_chance():
    rng = random.Random(0)
    pairs = []
    for i in range(3000):  # the label shows in the claim's length and overlap
        label = i % 3
        n = 8 + 4 * label + rng.randint(0, 10)
        vocab = 40 if rng.random() < 0.2 + 0.25 * label else 20
        claim = " ".join(f"w{rng.randint(0, vocab)}" for _ in range(n))
        premise = " ".join(f"w{k}" for k in range(25)) + "."
        pairs.append({"premise": premise, "claim": claim, "label": label})
    train, test = pairs[:2000], pairs[2000:]
    assert cue_baseline(train, test) > 0.5
    btrain, btest = balance(train, rng), balance(test, rng)
    assert len(btrain) > 300 and {p["label"] for p in btrain} == {0, 1, 2}
    assert cue_baseline(btrain, btest) <= 0.40


def _jsonl(path, rows, gz=False):
    opener = gzip.open if gz else open
    with opener(path, "wt", encoding="utf-8") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rows))


def test_documents_leave_out_every_held_out_document(tmp_path):
    raw, ds = tmp_path / "raw", tmp_path / "datasets"
    for d in (raw, ds / "nq-open", ds / "expertqa", ds / "wice"):
        d.mkdir(parents=True)
    text = lambda tag: f"The {tag} bridge opened in 1932 after four long years of work. It is long."  # noqa: E731
    _jsonl(raw / "nq-open-oracle.jsonl.gz", [{"question": f"q{i}", "answers": ["x"], "ctxs": [
        {"title": "t", "text": text(f"nq{i}"), "isgold": True}]} for i in range(3)], gz=True)
    _jsonl(ds / "nq-open" / "test.jsonl", [{"id": "nq-1"}])
    rec = lambda i, tag: {"id": i, "passages": [{"text": text(tag)}]}  # noqa: E731
    _jsonl(ds / "expertqa" / "train.jsonl", [rec("a", "eqa-train"), rec("b", "eqa-both")])
    _jsonl(ds / "expertqa" / "test.jsonl", [rec("c", "eqa-both"), rec("d", "eqa-test")])
    _jsonl(raw / "wice_claim_dev.jsonl", [{"meta": {"id": i}, "evidence": [text(tag)]}
                                          for i, tag in ((1, "wice-fit"), (2, "wice-held"), (3, "wice-held"))])
    _jsonl(ds / "wice" / "fit.jsonl", [{"id": "wice-1"}, {"id": "wice-3"}])
    _jsonl(ds / "wice" / "heldout.jsonl", [{"id": "wice-2"}])
    _jsonl(raw / "snli_dev_test.jsonl.gz", [{"premise": "A man plays a guitar on the street ."},
                                            {"premise": "A dog runs on the beach ."}], gz=True)
    (ds / "verifier" / "dev").mkdir(parents=True)
    _jsonl(ds / "verifier" / "dev" / "snli.jsonl", [{"premise": "A dog runs on the beach.", "claim": "x", "label": 0}])
    docs = documents(raw, ds)
    flat = {src: " ".join(s for d in v for s in d) for src, v in docs.items()}
    assert "nq0" in flat["nq"] and "nq2" in flat["nq"] and "nq1" not in flat["nq"]
    assert "eqa-train" in flat["expertqa"] and "eqa-both" not in flat["expertqa"] and "eqa-test" not in flat["expertqa"]
    assert "wice-fit" in flat["wice"] and "wice-held" not in flat["wice"]
    assert flat["snli"] == "A man plays a guitar on the street."
    assert contrast.main(["--raw", str(raw), "--datasets", str(ds), "-o", str(tmp_path / "o.jsonl.gz"),
                          "--no-ner"]) == 0
    assert (tmp_path / "o.jsonl.gz").exists()
