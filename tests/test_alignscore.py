"""AlignScore backend: a tiny random RoBERTa plus heads saved in the published Lightning
checkpoint layout, loaded through the real code."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from conftest import assert_float32_close
from franq.errors import ModelNotFoundError
from franq.faithfulness.alignscore import ALIGNED, AlignScoreCheckpointError, AlignScoreFaithfulness
from franq.faithfulness.chunks import chunk_context, claim_sentences
from tiny_encoders import build_alignscore

CONTEXT = ("The Eiffel tower is in Paris. It was built from 1887 to 1889 by Gustave Eiffel. "
           "Paris is the capital of France.")
PAIRS = [
    (CONTEXT, "The tower is in Paris. It was designed by the French engineer Gustave Eiffel."),
    (CONTEXT, "The Louvre is a museum."),
    ("Water boils at 100 degrees Celsius at sea level.", "Water boils at 100 degrees."),
]


@pytest.fixture(scope="module")
def tiny_align(tmp_path_factory):
    return build_alignscore(tmp_path_factory.mktemp("align"))


@pytest.fixture(scope="module")
def align(tiny_align):
    return AlignScoreFaithfulness(*tiny_align, device="cpu")


def _reference(backend, context, claim):
    """nli_sp written out per pair, one unpadded forward pass at a time."""
    per_sentence = []
    for sent in claim_sentences(claim):
        best = 0.0
        for chunk in chunk_context(context):
            enc = backend.tokenizer(chunk, sent, return_tensors="pt")
            with torch.no_grad():
                pooled = backend.model.base_model(input_ids=enc["input_ids"],
                                                  attention_mask=enc["attention_mask"]).pooler_output
                p = torch.softmax(backend.model.tri_layer(pooled), -1)[0, ALIGNED].item()
            best = max(best, p)
        per_sentence.append(best)
    return float(np.mean(per_sentence))


def test_alignscore_matches_per_pair_reference(align):
    got = align.predict(PAIRS)
    want = [_reference(align, c, h) for c, h in PAIRS]
    assert_float32_close(got, want)
    assert ((got > 0) & (got < 1)).all()


def test_batched_equals_one_pair_at_a_time(align):
    batched = align.predict(PAIRS)
    single = np.concatenate([align.predict([p]) for p in PAIRS])
    assert_float32_close(batched, single)


def test_multi_sentence_claim_is_mean_of_its_sentences(align):
    claim = PAIRS[0][1]
    sents = claim_sentences(claim)
    assert len(sents) == 2
    parts = align.predict([(CONTEXT, s) for s in sents])
    assert_float32_close(align.predict([(CONTEXT, claim)])[0], parts.mean())


def test_long_context_is_chunked_not_truncated(tiny_align):
    backend = AlignScoreFaithfulness(*tiny_align, device="cpu")  # max_length = 64 positions
    seen: list[str] = []
    forward = backend._forward

    def spy(premises, hypotheses):
        seen.extend(premises)
        for p, h in zip(premises, hypotheses):
            assert len(backend.tokenizer(p, h)["input_ids"]) <= 64
        return forward(premises, hypotheses)

    backend._pairs.forward = spy
    context = " ".join(f"w{i}" for i in range(300)) + ". The moon orbits the earth."
    p = backend.predict([(context, "The moon orbits the earth.")])
    assert p.shape == (1,)
    assert " ".join(seen).split().count("moon") >= 1
    scored = " ".join(dict.fromkeys(seen)).split()
    assert sorted(scored) == sorted(context.split())  # every word of the context, exactly once
    assert len(seen) > 1


def test_missing_and_unexpected_keys_are_listed(tiny_align, tmp_path):
    ckpt, base = tiny_align
    obj = torch.load(ckpt, weights_only=True)
    del obj["state_dict"]["tri_layer.weight"]
    obj["state_dict"]["classifier.dense.weight"] = torch.zeros(1)
    bad = tmp_path / "bad.ckpt"
    torch.save(obj, bad)
    with pytest.raises(AlignScoreCheckpointError) as err:
        AlignScoreFaithfulness(bad, base, device="cpu")
    assert "missing keys: tri_layer.weight" in str(err.value)
    assert "unexpected keys: classifier.dense.weight" in str(err.value)


def test_wrong_base_model_for_checkpoint_names_the_shapes(tiny_align, tmp_path):
    from tiny_encoders import build_tokenizer, tiny_roberta_config

    ckpt, _ = tiny_align
    other = tmp_path / "other"
    cfg = tiny_roberta_config(len(build_tokenizer()))
    cfg.hidden_size, cfg.num_attention_heads = 48, 4
    cfg.save_pretrained(other)
    build_tokenizer().save_pretrained(other)
    with pytest.raises(AlignScoreCheckpointError, match="roberta-large"):
        AlignScoreFaithfulness(ckpt, other, device="cpu")


def test_missing_checkpoint_file_says_franq_never_downloads(tiny_align, tmp_path):
    with pytest.raises(ModelNotFoundError, match="alignscore_checkpoint.*never downloads"):
        AlignScoreFaithfulness(tmp_path / "nope.ckpt", tiny_align[1], device="cpu")
    with pytest.raises(ModelNotFoundError, match="alignscore_base_model"):
        AlignScoreFaithfulness(tiny_align[0], tmp_path, device="cpu")


def test_chunk_context_cuts_at_sentence_boundaries():
    text = " ".join(f"Sentence number {i} has six words." for i in range(10))
    chunks = chunk_context(text, max_words=14)
    assert all(len(c.split()) <= 14 for c in chunks)
    assert all(c.endswith(".") for c in chunks)
    assert " ".join(chunks).split() == text.split()
