"""Evaluation harness pieces that need no model: data loading, units, methods."""
import json
import math

import numpy as np
import pytest

from calibration.contract import ClaimInputs
from calibration.franq import FranqCalibrator
from franq.evaluation.data import load_nq_open
from franq.evaluation.methods import FRANQ, GENERAL, LONG, RAG, SHORT, XGB, run_methods
from franq.evaluation.units import Units, attempted, is_correct, long_units, merge_near_ties, short_units
from franq.faithfulness.combined import CombinedFaithfulness
from franq.types import Passage


def test_is_correct_and_attempted():
    assert is_correct("The first prize went to Wilhelm Conrad Röntgen in 1901.", ["Wilhelm Conrad Röntgen"])
    assert not is_correct("Wilhelm Conrad", ["Wilhelm Conrad Röntgen"])
    assert not is_correct("The Anne Lee", ["Ann"])  # token boundaries, not substrings
    assert is_correct("the Beatles.", ["The Beatles"])  # articles and punctuation normalized
    assert attempted("Paris")
    for refusal in ("", "  ", "I don't know.", "The passages do not mention the date.", "The answer is unknown"):
        assert not attempted(refusal)


def test_nq_open_variants(tmp_path):
    import gzip

    with gzip.open(tmp_path / "passages.jsonl.gz", "wt") as f:
        for i in range(4):
            f.write(json.dumps({"id": i, "title": f"T{i}", "text": f"text {i}"}) + "\n")
    rows = [{"id": "nq-1", "question": "q1", "answers": ["a"], "passage_ids": [0, 1], "gold_position": 0,
             "corrupted": True, "corrupted_passage_ids": [3, 1]},
            {"id": "nq-2", "question": "q2", "answers": ["b"], "passage_ids": [1, 2], "gold_position": 1,
             "corrupted": False, "corrupted_passage_ids": [1, 2]}]
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    clean = load_nq_open(tmp_path, "test")
    bad = load_nq_open(tmp_path, "test", "corrupted")
    assert clean[0].passages == (Passage("text 0", "T0"), Passage("text 1", "T1")) and not clean[0].corrupted
    assert bad[0].passage_ids == (3, 1) and bad[0].corrupted
    assert bad[1].passage_ids == clean[1].passage_ids and not bad[1].corrupted  # shared generation
    assert len(load_nq_open(tmp_path, "test", limit=1)) == 1
    with pytest.raises(ValueError, match="variant"):
        load_nq_open(tmp_path, "test", "noisy")


def test_passage_answers_are_read_from_the_built_folder_without_the_raw_file(tmp_path, monkeypatch):
    import gzip

    from franq.evaluation.data import PASSAGE_ANSWERS, passage_answers, raw_passage_answers, write_passage_answers

    raw, nq = tmp_path / "raw", tmp_path / "nq"
    raw.mkdir()
    nq.mkdir()
    rows = [{"answers": ["Paris"], "ctxs": [{"title": "France", "text": "Paris is the capital."}]},
            {"answers": ["1989"], "ctxs": [{"title": "Wall", "text": "It fell in 1989."}]}]
    with gzip.open(raw / "nq-open-oracle.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rows))
    with gzip.open(nq / "passages.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write(json.dumps({"id": 7, "title": "Wall", "text": "It fell in 1989."}) + "\n")
    monkeypatch.delenv("FRANQ_RAW_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match="FRANQ_RAW_DATA"):
        passage_answers(nq)  # neither the built file nor the raw data
    assert passage_answers(nq, raw) == {7: ["1989"]}
    assert write_passage_answers(nq, raw) == 1
    first = (nq / PASSAGE_ANSWERS).read_bytes()
    write_passage_answers(nq, raw)
    assert (nq / PASSAGE_ANSWERS).read_bytes() == first  # byte-stable: no timestamp
    assert passage_answers(nq) == raw_passage_answers(nq, raw) == {7: ["1989"]}  # no raw data needed now


def test_the_committed_passage_answers_name_the_pool_passages():
    from pathlib import Path

    from franq.evaluation.data import passage_answers

    nq = Path(__file__).resolve().parents[1] / "datasets" / "nq-open"
    owners = passage_answers(nq)
    assert len(owners) == 2415 and all(isinstance(v, list) and v for v in owners.values())


def test_expertqa_held_out_leaves_out_test_answers_whose_question_is_in_train(tmp_path):
    from franq.evaluation.data import expertqa_held_out, expertqa_seen_in_train

    folder = tmp_path / "expertqa"
    folder.mkdir()
    train = [{"id": "v-0", "question": "Why is the sky blue?"}, {"id": "v-1", "question": "What is rust?"}]
    test = [{"id": "t-0", "question": "What is rust?"}, {"id": "t-1", "question": "What is tin?"}]
    for name, rows in (("train", train), ("test", test)):
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert expertqa_seen_in_train(tmp_path) == {"t-0"}
    assert [r["id"] for r in expertqa_held_out(tmp_path)] == ["t-1"]


def test_the_committed_expertqa_split_shares_twelve_answers_with_train():
    from pathlib import Path

    from franq.evaluation.data import expertqa_held_out, expertqa_seen_in_train

    datasets = Path(__file__).resolve().parents[1] / "datasets"
    assert len(expertqa_seen_in_train(datasets)) == 12  # domain_val holds 12 of rand_test's questions
    held_out = expertqa_held_out(datasets)
    assert len(held_out) == 205
    train = {json.loads(line)["question"] for line in open(datasets / "expertqa" / "train.jsonl", encoding="utf-8")}
    assert not train & {rec["question"] for rec in held_out}


def _long_obs(status="scored", lp=-3.0, ent=(1.0, 2.0), ptrue=(-0.5, -1.5)):
    """An ``observe_long`` claim row as written now (``signals``, ``p_true_raw``)."""
    return {"text": "c", "status": status, "p_faithful": 0.7, "p_true_raw": 0.1,
            "signals": {"log_claim_prob": lp, "log_parametric": lp - 1, "n_tokens": 3.0},
            "max_token_entropy": max(ent), "mean_token_entropy": float(np.mean(ent)), "p_true_logprobs": list(ptrue)}


def test_long_units_keep_labelled_scored_claims():
    rec = {"id": "a", "claims": [{"text": "c1", "is_true": True, "is_faithful": False},
                                 {"text": "c2", "is_true": None, "is_faithful": True},
                                 {"text": "c3", "is_true": False, "is_faithful": None},
                                 {"text": "c4", "is_true": False}]}
    obs = {"claims": [_long_obs(), _long_obs(), _long_obs(lp=-9.0), _long_obs(status="not_check_worthy")]}
    units, skipped = long_units([(rec, obs)])
    assert units.ids == ("a#0", "a#2") and units.is_true.tolist() == [1, 0]
    assert units.is_faithful[0] == 0 and math.isnan(units.is_faithful[1])
    assert skipped == {"unlabelled": 1, "not_scored": 1}
    # P(True) = p(True) / (p(True) + p(False)) from the two log-probabilities
    assert units["p_true"][0] == pytest.approx(1 / (1 + math.exp(-1.0)))
    with pytest.raises(ValueError, match="3 observed"):
        long_units([(rec, {"claims": obs["claims"][:3]})])
    # committed snapshots from before 0.2 keep the signals under "components"
    legacy = {"claims": [{**{k: v for k, v in c.items() if k != "signals"}, "components": c["signals"]}
                         for c in obs["claims"]]}
    again, _ = long_units([(rec, legacy)])
    assert again.ids == units.ids and again.signals.keys() == units.signals.keys()
    for name in units.signals:
        np.testing.assert_array_equal(again[name], units[name])


def _synthetic_long(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.7
    rows = []
    for i in range(n):
        good = float(y[i])
        rows.append({"id": str(i), "is_true": int(y[i]), "is_faithful": int(rng.random() < 0.6),
                     "signals": {"p_faithful": rng.random(), "log_claim_prob": -5 + 3 * good - abs(rng.normal()),
                                 "log_parametric": -6 + 2 * good - abs(rng.normal()), "n_tokens": 5.0,
                                 "max_token_entropy": 3 - good + rng.random(), "mean_token_entropy": rng.random(),
                                 "p_true": rng.random()}})
    return Units.from_rows(rows)


def test_signals_equal_up_to_float_noise_become_exact_ties():
    root7 = np.sqrt(7.0)
    values = np.array([root7, np.nextafter(root7, 3.0), 2.0, np.nan, root7 * (1 + 1e-8), np.nextafter(root7, 0.0)])
    merged = merge_near_ties(values)
    assert merged[0] == merged[1] == merged[5] == np.nextafter(root7, 0.0)  # the run's smallest value
    assert merged[4] == values[4] and merged[2] == 2.0 and np.isnan(merged[3])  # 1e-8 apart: distinct
    rows = [{"id": str(i), "is_true": i % 2, "signals": {"u": float(v)}} for i, v in enumerate(values[:3])]
    assert Units.from_rows(rows)["u"].tolist() == [root7, root7, 2.0]


def test_run_methods_long_covers_every_group():
    train, test = _synthetic_long(200, 0), _synthetic_long(150, 1)
    scores, reports = run_methods(LONG, train, test)
    groups = {s.group for s in scores}
    assert groups == {GENERAL, RAG, XGB, FRANQ}
    by_name = {s.name: s for s in scores}
    assert by_name["CCP"].test is None and "NLI" in by_name["CCP"].note
    for name in ("FRANQ no calibration", "FRANQ calibrated", "FRANQ condition-calibrated", "FRANQ soft-calibrated"):
        assert by_name[name].test.shape == (150,)
        assert np.all((by_name[name].test >= 0) & (by_name[name].test <= 1))
    assert set(reports) == {"calibrated", "condition", "soft", "calibrated+T=0.5", "condition+T=0.5"}
    # the thresholded variants (paper table 13): one branch per claim, by P_faithful > 0.5
    p_f, a, b = LONG.franq_inputs(test)
    np.testing.assert_allclose(by_name["FRANQ no calibration T=0.5"].test, np.where(p_f > 0.5, a, b))
    for variant, label in (("calibrated", "FRANQ calibrated T=0.5"), ("condition", "FRANQ condition-calibrated T=0.5")):
        cal = FranqCalibrator(variant=variant, hard_mix_threshold=0.5)
        cal.fit(ClaimInputs(*LONG.franq_inputs(train)), train.is_true, is_faithful=train.is_faithful)
        out = cal.predict_components(ClaimInputs(p_f, a, b))
        c_a, c_b = out.p_true_if_supported, out.p_true_if_unfaithful
        np.testing.assert_allclose(by_name[label].test, np.where(p_f > 0.5, c_a, c_b))
    # the signal is in the claim probability: calibrated FRANQ ranks better than chance
    from franq.evaluation.metrics import auroc

    assert auroc(by_name["FRANQ calibrated"].test, test.is_true) > 0.7
    # uncalibrated FRANQ is the raw mix
    want = test["p_faithful"] * np.exp(test["log_claim_prob"]) + (1 - test["p_faithful"]) * np.exp(test["log_parametric"])
    np.testing.assert_allclose(by_name["FRANQ no calibration"].test, want)


def test_supervised_methods_report_one_class_train():
    train = _synthetic_long(30, 0)
    train = Units(train.ids, np.ones(len(train), dtype=np.int64), train.is_faithful, train.signals)
    scores, _ = run_methods(LONG, train, _synthetic_long(20, 1))
    for s in scores:
        if s.group == XGB or s.name.startswith("FRANQ ") and not s.name.startswith("FRANQ no calibration"):
            assert s.test is None and "both classes" in s.note


class _Item:
    def __init__(self, i, answers):
        self.id, self.question, self.answers = f"q{i}", "who wrote the book", answers
        self.passages = (Passage("The book was written by Ann Lee in 1901.", "Book"),)


def _short_record(greedy, samples):
    return {"prompt_tokens": 50, "warnings": [],
            "greedy": {"text": greedy, "token_ids": [1, 2], "token_logprobs": [-0.5, -1.0],
                       "token_entropies": [1.0, 2.0], "stop": "eos"},
            "samples": [{"text": t, "logprob": -1.0 - k, "n_tokens": 2} for k, t in enumerate(samples)],
            "p_true_logprobs": [-0.2, -2.0], "closed_logprobs": [-2.0, -3.0]}


def test_short_units_from_cached_samples():
    items = [_Item(0, ["Ann Lee"]), _Item(1, ["Ann Lee"]), _Item(2, ["Ann Lee"])]
    records = [_short_record("Ann Lee wrote it.", ["Ann Lee", "Ann Lee", "Bob"]),
               _short_record("Bob Smith", ["Bob Smith", "Carl", "Dan"]),
               _short_record("I don't know.", ["x", "y", "z"])]
    units, skipped = short_units(items, records, model_name="m", faithfulness=CombinedFaithfulness(lm_name="m"))
    assert skipped == {"not_attempted": 1}
    assert units.is_true.tolist() == [1, 0]
    assert units["log_seq_prob"][0] == pytest.approx(-1.5)
    assert units["mean_logprob"][0] == pytest.approx(-0.75)
    assert units["mean_token_entropy"][0] == pytest.approx(1.5)
    assert units["log_parametric"][0] == pytest.approx(-5.0)
    # agreeing samples: fewer meanings, lower semantic entropy and eigenvalue sum
    assert units["u_semantic_entropy"][0] < units["u_semantic_entropy"][1]
    assert units["u_eigval"][0] < units["u_eigval"][1]
    franq_none = SHORT.franq_none(units)  # the raw mix, from the short scorers' declared signals
    np.testing.assert_allclose(franq_none, units["p_faithful"] * units["p_semantic_entropy"]
                               + (1 - units["p_faithful"]) / units["u_eigval"])
    assert ((0 <= franq_none) & (franq_none <= 1)).all()
    # both branches on one scale: a certain meaning reads 1 in each
    assert units["p_semantic_entropy"][0] > units["p_semantic_entropy"][1]
    scores, _ = run_methods(SHORT, units, units)
    by_name = {s.name: s for s in scores}
    assert set(by_name) >= {"Semantic Entropy", "SentenceSAR", "Sum of Eigenvalues", "FRANQ no calibration"}
    # the Semantic Entropy baseline and the paper-scale row read the paper's raw value
    np.testing.assert_allclose(by_name["Semantic Entropy"].test, -units["u_semantic_entropy"])
    np.testing.assert_allclose(by_name["FRANQ no calibration, paper's raw scales"].test,
                               units["p_faithful"] * np.exp(-units["u_semantic_entropy"])
                               + (1 - units["p_faithful"]) / units["u_eigval"])


def test_ccp_row_is_scored_when_the_units_carry_it_and_says_why_not_otherwise():
    train, test = _synthetic_long(120, 0), _synthetic_long(80, 1)
    by_name = {s.name: s for s in run_methods(LONG, train, test)[0]}
    assert by_name["CCP"].test is None and "`ccp` scorer" in by_name["CCP"].note
    ccp = np.random.default_rng(2).random(len(test))
    test = Units(test.ids, test.is_true, test.is_faithful, {**test.signals, "p_ccp": ccp})
    row = {s.name: s for s in run_methods(LONG, train, test)[0]}["CCP"]
    assert row.group == GENERAL and row.probabilities and row.note == ""
    np.testing.assert_allclose(row.test, ccp)


@pytest.mark.parametrize("setting, words", [
    (LONG, ("teacher-forced", "not decomposed", "Unsure left out", "not AlignScore")),
    (SHORT, ("BM25", "gold match", "`nli_argmax`", "p_semantic_entropy"))])
def test_each_paper_table_states_its_settings_beside_the_numbers(setting, words):
    from franq.evaluation.tables import MethodResult, render_markdown

    assert all(w in setting.described for w in words)
    md = render_markdown([MethodResult("A", "g", {"PRR": 0.5}, None, 10)], title="T", columns=("PRR",),
                         settings=setting.described)
    lines = md.splitlines()
    assert lines[2] == f"Settings: {setting.described}." and lines[4].startswith("| Method |")


@pytest.mark.parametrize("setting, what", [
    (LONG, {"model", "answers", "claims", "truth labels", "P_faithful", "CCP row"}),
    (SHORT, {"model", "passages", "corrupted retrieval", "correct answer", "sample equivalence", "UQ_faith scale",
             "CCP row"})])
def test_each_paper_table_has_its_differences_from_the_paper(setting, what):
    from franq.evaluation.tables import render_differences

    assert {row[0] for row in setting.differences} == what
    assert all(len(row) == 4 and all(row) for row in setting.differences)  # each says why it stays
    lines = render_differences(setting.differences).splitlines()
    assert lines[0] == "Differences from the paper:" and lines[2] == "| | paper | here | why it stays |"
    assert len(lines) == 4 + len(setting.differences) and render_differences(()) == ""


def test_run_cached_observes_each_key_once(tmp_path):
    from franq.evaluation.observe import cache_key, run_cached

    calls = []

    def observe(item):
        calls.append(item)
        return {"value": item * 2}

    path = str(tmp_path / "cache.jsonl")
    items = [(cache_key("a", i), i) for i in range(3)]
    assert [r["value"] for r in run_cached(path, items, observe, progress=False)] == [0, 2, 4]
    assert calls == [0, 1, 2]
    # rerun with one more item: only the new one is observed; order follows the input
    more = [(cache_key("a", 9), 9)] + items
    assert [r["value"] for r in run_cached(path, more, observe, progress=False)] == [18, 0, 2, 4]
    assert calls == [0, 1, 2, 9]
    # keys already known (a committed snapshot) are not observed and not re-written
    known = {cache_key("a", 5): {"id": cache_key("a", 5), "value": -1}}
    out = list(run_cached(path, [(cache_key("a", 5), 5)], observe, progress=False, known=known))
    assert out[0]["value"] == -1 and calls == [0, 1, 2, 9]
    assert len(open(path).read().splitlines()) == 4
    assert cache_key("a", 1) != cache_key("a", 2) and cache_key("a", [1, 2]) == cache_key("a", [1, 2])


def test_cache_keys_follow_what_a_record_depends_on():
    from franq.evaluation.observe import long_key, short_key
    from franq.evidence.samples import SamplingOptions

    base = short_key("nq-1", (1, 2), SamplingOptions())
    assert base == short_key("nq-1", [1, 2], SamplingOptions())
    assert base != short_key("nq-1", (2, 1), SamplingOptions())           # other passage order
    assert base != short_key("nq-1", (1, 2), SamplingOptions(n_samples=5))
    stack = {"model": "m", "faithfulness": "f", "prompt_version": "rag-v1"}
    assert long_key("a", stack) != long_key("a", {**stack, "faithfulness": "g"})
