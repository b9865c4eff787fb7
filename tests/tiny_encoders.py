"""Tiny random RoBERTa encoders (word-level tokenizer from the ``tokenizers`` library)
saved in the formats franq's encoder backends load: an AlignScore Lightning checkpoint
and a Hugging Face NLI sequence classifier. No network; built in a second."""
from __future__ import annotations

from pathlib import Path

from franq.evaluation.faithfulness_backends import build_alignscore as _build_alignscore
from franq.evaluation.faithfulness_backends import tiny_roberta_config as _tiny_roberta_config
from franq.evaluation.faithfulness_backends import word_tokenizer

WORDS = """the a of and in to is was by for on with as at from that it its this are be
tower paris france eiffel built iron lattice capital city river seine engineer gustave designed
bridge year 1887 1889 1900 tall metres height visitors million french europe largest museum
louvre art painting mona lisa question answer claim supported not true false born died
water boils at degrees celsius sea level moon earth sun planet orbit""".split()


def build_tokenizer():
    return word_tokenizer(WORDS)


def tiny_roberta_config(vocab_size: int, max_positions: int = 66, **extra):
    return _tiny_roberta_config(vocab_size, max_positions, **extra)


def build_alignscore(directory: Path, *, seed: int = 0, max_positions: int = 66) -> tuple[Path, Path]:
    """A tiny random AlignScore checkpoint over :data:`WORDS` (see
    :func:`franq.evaluation.faithfulness_backends.build_alignscore`). Returns (checkpoint, base)."""
    return _build_alignscore(directory, seed=seed, max_positions=max_positions, words=WORDS)


def build_nli(directory: Path, *, seed: int = 0, labels=("contradiction", "neutral", "entailment")) -> Path:
    """A tiny RobertaForSequenceClassification NLI model with ``labels`` as id2label."""
    import torch
    from transformers import RobertaForSequenceClassification

    directory = Path(directory)
    tokenizer = build_tokenizer()
    config = tiny_roberta_config(len(tokenizer), num_labels=len(labels),
                                 id2label=dict(enumerate(labels)), label2id={l: i for i, l in enumerate(labels)})
    torch.manual_seed(seed)
    model = RobertaForSequenceClassification(config)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
