"""Validation of JSON records: errors name the field."""
from __future__ import annotations

import pytest

from franq.errors import InputError
from franq.io import load_json, parse_example

GOOD = {"id": "a1", "question": "Q?", "passages": ["p1", {"title": "T", "text": "p2"}], "answer": "A."}


def test_valid_record_round_trips():
    ex = parse_example(GOOD)
    assert ex.id == "a1" and ex.passages[1].title == "T" and ex.claims is None


def test_labelled_claims_keep_their_labels():
    ex = parse_example(GOOD | {"claims": ["c1", {"text": "c2", "is_true": False, "is_faithful": None}]})
    assert ex.claims == ("c1", "c2")
    assert ex.claim_labels == ({}, {"is_true": False, "is_faithful": None})


def test_a_claim_condition_and_synthetic_label_are_kept():
    ex = parse_example(GOOD | {"claims": [{"text": "c", "is_true": False, "is_faithful": False,
                                           "condition": "contradicted", "synthetic": True},
                                          {"text": "d", "condition": None}]})
    assert ex.claim_labels == ({"is_true": False, "is_faithful": False, "synthetic": True,
                                "condition": "contradicted"}, {"condition": None})


@pytest.mark.parametrize("record, message", [
    ({k: v for k, v in GOOD.items() if k != "answer"}, "missing field 'answer'"),
    (GOOD | {"passages": {"a": 1}}, "'passages' must be a list"),
    (GOOD | {"passages": [1]}, "'passages[0]' must be a string"),
    (GOOD | {"passages": [{"title": "T"}]}, "'passages[0]' has no 'text'"),
    (GOOD | {"question": None}, "'question' must be a string, got NoneType"),
    (GOOD | {"id": 1.5}, "'id' must be a string or an integer"),
    (GOOD | {"extra": 1}, "unknown field"),
    (GOOD | {"claims": [{"text": "c", "is_true": "yes"}]}, "'claims[0].is_true' must be true, false or null"),
    (GOOD | {"claims": [{"text": "c", "condition": "refuted"}]}, "'claims[0].condition' must be one of supported"),
    (GOOD | {"claims": [{"text": "c", "is_faithful": True, "condition": "contradicted"}]},
     "'claims[0]': 'condition' 'contradicted' disagrees with 'is_faithful' true"),
    ([1, 2], "expected a JSON object"),
])
def test_bad_records_name_the_field(record, message):
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_example(record, "line 7", strict=True)  # strict: an unknown field is refused


def test_json_line_errors_carry_the_line_and_reject_nan():
    with pytest.raises(InputError, match="line 3: not valid JSON"):
        load_json('{"question": NaN}', "line 3")


def test_stable_id_is_a_content_hash_when_missing():
    a = parse_example({k: v for k, v in GOOD.items() if k != "id"})
    b = parse_example({k: v for k, v in GOOD.items() if k != "id"})
    assert a.stable_id() == b.stable_id() and a.stable_id().startswith("sha1:")


