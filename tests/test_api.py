"""The Python API: ``franq.Example`` is exported and ``score_many`` takes dicts, examples
and data frames."""
from __future__ import annotations

import pytest
from conftest import make_franq

import franq

GOOD = {"question": "When was the Eiffel Tower built?",
        "passages": ["The Eiffel Tower was built from 1887 to 1889. It is in Paris."],
        "answer": "It was built from 1887 to 1889 [1]. It is in Paris."}


def test_example_is_exported_and_score_many_takes_dicts_and_dataframes(tiny_lm):
    assert "Example" in franq.__all__ and franq.Example.from_dict(GOOD).answer == GOOD["answer"]
    f = make_franq(tiny_lm)
    from_dict = f.score_many([GOOD, {**GOOD, "id": 2, "meta": {"user": "ann"}}])
    from_example = f.score_many([franq.Example.from_dict(GOOD)])
    assert [c.p_true_raw for c in from_dict[0].claims] == [c.p_true_raw for c in from_example[0].claims]
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([GOOD, {**GOOD, "claims": ["It is in Paris."]}])  # NaN 'claims' in row 0: not given
    from_frame = f.score_many(frame)
    assert len(from_frame) == 2 and len(from_frame[1].claims) == 1
    assert [c.p_true_raw for c in from_frame[0].claims] == [c.p_true_raw for c in from_dict[0].claims]
    with pytest.raises(franq.InputError, match=r"examples\[1\]: missing field 'answer'"):
        f.score_many([GOOD, {"question": "q", "passages": ["p"]}])
