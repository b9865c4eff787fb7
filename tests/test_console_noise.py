"""Console noise: loading and generating print no third-party deprecation or progress bar."""
from __future__ import annotations

import pytest


def test_generating_an_answer_gives_no_transformers_deprecation(tiny_lm, monkeypatch):
    """Every `franq answer` and the service log printed transformers' "Passing
    `generation_config` together with generation-related arguments is deprecated"."""
    from transformers.utils import logging as hf_logging

    from franq.lm.sampling import generate

    logger = hf_logging.get_logger("transformers.generation.utils")
    said = []
    for level in ("warning", "warning_once", "info"):
        monkeypatch.setattr(logger, level, lambda msg, *args, **kwargs: said.append(str(msg)))
    out = generate(tiny_lm, tiny_lm.encode("The Eiffel Tower is in"), max_new_tokens=3)
    assert len(out.token_ids) == len(out.token_logprobs) <= 3
    assert not [m for m in said if "generation_config" in m], said


def test_the_trust_report_embedder_loads_without_a_progress_bar(capfd):
    pytest.importorskip("sentence_transformers")
    from transformers.utils import logging as hf_logging

    import franq
    from franq.apps.trust.models import Embedder

    was = hf_logging.is_progress_bar_enabled()
    hf_logging.enable_progress_bar()  # as in a fresh process (another test may have turned it off)
    try:
        try:
            embedder = Embedder()
        except franq.ModelNotFoundError as exc:
            pytest.skip(f"the trust extra's embedding model is not installed: {exc}")
        assert embedder.encode(["a"]).shape[0] == 1
    finally:
        (hf_logging.enable_progress_bar if was else hf_logging.disable_progress_bar)()
    assert "Loading weights" not in capfd.readouterr().err
