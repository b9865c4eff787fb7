"""Shared fixtures: tiny random causal LMs built from configs (no network), saved in the
Hugging Face format and loaded through franq's real loading code."""
from __future__ import annotations

import os

# One torch thread, for the tests and the CLI subprocesses they start (which inherit the
# environment), unless the caller chose: on a busy 2-core machine two threads per process
# oversubscribe the cores and run about 5x slower. Set before anything imports torch.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] "
    "+ '<|im_end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

CORPUS = [
    "The Eiffel Tower is a wrought-iron lattice tower in Paris, France, built from 1887 to 1889.",
    "Gustave Eiffel was a French civil engineer who designed bridges and the tower.",
    "Paris is the capital of France. Lyon and Marseille are large French cities.",
    "Question: Answer: Passages: What is the capital? Who designed it? When was it built?",
    "- item one\n- item two\n1. first [1] [2] [3] 2. second (e.g. 3.5 million) # Heading",
    "Café, naïve, Zürich, São Paulo, 東京, emoji 🙂 and other unicode text.",
]


def _train_tokenizer(kind: str):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<|pad|>", "<|im_start|>", "<|im_end|>"]
    if kind == "bytelevel":
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=420, special_tokens=specials,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    else:  # SentencePiece-like: metaspace word boundaries, unigram model
        tok = Tokenizer(models.Unigram())
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
        trainer = trainers.UnigramTrainer(vocab_size=300, special_tokens=specials + ["<unk>"], unk_token="<unk>")
    tok.train_from_iterator(CORPUS * 3, trainer)
    hf = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|pad|>",
                                 unk_token="<unk>" if kind != "bytelevel" else None)
    hf.chat_template = CHATML
    return hf


def build_tiny_lm(path, kind: str = "bytelevel", seed: int = 0, max_positions: int = 512):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = _train_tokenizer(kind)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=max_positions, initializer_range=0.3,
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
                         bos_token_id=None, tie_word_embeddings=False)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_lm_path(tmp_path_factory):
    return build_tiny_lm(tmp_path_factory.mktemp("tiny-bytelevel"))


@pytest.fixture(scope="session")
def tiny_lm(tiny_lm_path):
    from franq.lm import CausalLM

    return CausalLM.load(str(tiny_lm_path), device="cpu")


@pytest.fixture(scope="session")
def tiny_sp_lm(tmp_path_factory):
    from franq.lm import CausalLM

    return CausalLM.load(str(build_tiny_lm(tmp_path_factory.mktemp("tiny-sp"), kind="sp")), device="cpu")


class ConstantFaithfulness:
    """Test double: the same P(supported) for every pair."""

    needs = frozenset()

    def __init__(self, value: float):
        self.value = value
        self.name = f"constant-{value}"

    def predict(self, pairs, evidence=None):
        return np.full(len(pairs), self.value)


@pytest.fixture
def constant_faithfulness():
    return ConstantFaithfulness


TEST_CONFIG = {"faithfulness": {"name": "lexical"}, "calibration": {"calibrator": "none"}}
"""What tests build a Franq with unless they say otherwise: the offline lexical backend and
no calibrator, so every value in the results is raw."""


def franq_config(config: dict | None = None):
    """:data:`TEST_CONFIG` with ``config``'s sections merged in (nested dicts, as in a file)."""
    from franq.config import FranqConfig

    data = {k: dict(v) for k, v in TEST_CONFIG.items()}
    for key, value in (config or {}).items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    return FranqConfig.from_dict(data)


def make_franq(lm, config: dict | None = None, **components):
    """A :class:`~franq.pipeline.Franq` on a loaded ``lm`` with :func:`franq_config`;
    ``components`` (decomposer, faithfulness, equivalence) replace the configured ones."""
    from franq.pipeline import Franq

    return Franq(franq_config(config), lm, **components)


@pytest.fixture(name="make_franq")
def _make_franq_fixture():
    return make_franq


FLOAT32_TOL = 1e-4
"""Absolute and relative tolerance for float32 model outputs computed along two paths (a
batch of 2 against a batch of 1, a cached prefix against the full prompt, padded against
unpadded, SDPA against eager attention). A float32 keeps about 7 significant digits (eps
1.2e-7), and kernels that block a sum differently round differently: on one CPU, and more
so across CPUs (AVX2 / AVX-512, oneDNN / OpenBLAS). Over the tiny models' dot products and
a log-softmax over their vocabulary, values of magnitude ~10 differ by up to ~1e-5 (1.9e-6
seen at atol 1e-6 on a second machine); 1e-4 leaves a margin and still catches a wrong
token, position or mask, which moves a value by 1e-2 or more."""


def assert_float32_close(got, want, tol: float = FLOAT32_TOL):
    """``got`` equals ``want`` up to float32 rounding of two computation paths
    (:data:`FLOAT32_TOL`)."""
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64),
                               rtol=tol, atol=tol)


GOOD = {"question": "When was the Eiffel Tower built?",
        "passages": ["The Eiffel Tower was built from 1887 to 1889."],
        "answer": "It was built from 1887 to 1889 [1]. It is in Paris."}
"""One well-formed input record (a long answer of two claims, one passage) for the CLI tests."""


def run_cli(*args):
    """The real ``franq`` command in-process (click's runner), exceptions raised."""
    from click.testing import CliRunner

    from franq.cli import main

    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def tiny_cli_args(tiny_lm_path) -> list[str]:
    """The CLI options that score with the tiny model as :data:`TEST_CONFIG` does."""
    return ["--model", str(tiny_lm_path), "--faithfulness", "lexical", "--calibrator", "none"]


@pytest.fixture(scope="session")
def nli_dir(tmp_path_factory):
    """A tiny random NLI classifier (labels contradiction, neutral, entailment) in the
    Hugging Face format (:func:`tiny_encoders.build_nli`)."""
    from tiny_encoders import build_nli

    return build_nli(tmp_path_factory.mktemp("nli"))


@pytest.fixture(scope="session")
def verifier_dir(tmp_path_factory):
    """A tiny random franq verifier directory (:func:`tiny_encoders.build_verifier`); tests
    only read it."""
    import torch
    from tiny_encoders import build_verifier

    torch.set_num_threads(1)
    return build_verifier(tmp_path_factory.mktemp("verifier") / "tiny")


@pytest.fixture(autouse=True)
def _limits_in_force_reset():
    """franq.limits.use_limits holds the run's limits process-wide (a CLI run, a Franq built
    with [limits]); each test starts from the defaults, as a new process would."""
    from franq import limits

    limits.use_limits(None)
    yield
    limits.use_limits(None)
