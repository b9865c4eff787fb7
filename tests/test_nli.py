"""NLI backend with a tiny random RoBERTa sequence classifier saved in the HF format."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from conftest import assert_float32_close
from franq.errors import InputError, ModelNotFoundError
from franq.faithfulness.chunks import chunk_context
from franq.faithfulness.nli import NLIFaithfulness, entailment_index
from tiny_encoders import build_nli

CONTEXT = "The Eiffel tower is in Paris. It was built in 1889. " + " ".join(f"w{i}" for i in range(120))
PAIRS = [(CONTEXT, "The tower is in Paris. It is tall."), ("Water boils at 100 degrees.", "Water boils.")]


@pytest.fixture(scope="module")
def nli_dir(tmp_path_factory):
    return build_nli(tmp_path_factory.mktemp("nli"), labels=("ENTAILMENT", "NEUTRAL", "CONTRADICTION"))


def test_entailment_index_read_from_config(nli_dir):
    backend = NLIFaithfulness(nli_dir, device="cpu")
    assert backend.entail == 0
    assert entailment_index({0: "contradiction", 1: "neutral", 2: "entailment"}) == 2
    with pytest.raises(InputError, match="id2label"):
        entailment_index({0: "LABEL_0", 1: "LABEL_1"})


def test_nli_is_max_over_chunks_of_entailment_probability(nli_dir):
    backend = NLIFaithfulness(nli_dir, device="cpu", chunk_words=20)
    got = backend.predict(PAIRS)
    want = []
    for context, claim in PAIRS:
        best = 0.0
        for chunk in chunk_context(context, max_words=20):
            enc = backend.tokenizer(chunk, claim, return_tensors="pt")
            with torch.no_grad():
                best = max(best, torch.softmax(backend.model(**enc).logits, -1)[0, 0].item())
        want.append(best)
    assert_float32_close(got, want)
    assert_float32_close(np.concatenate([backend.predict([p]) for p in PAIRS]), got)


def test_nli_model_not_found_names_field(tmp_path):
    with pytest.raises(ModelNotFoundError, match="nli_model"):
        NLIFaithfulness(tmp_path / "missing", device="cpu")
