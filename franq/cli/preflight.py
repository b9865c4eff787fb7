"""Files a command's options and config name, checked before anything heavy starts.

``franq score --calibrator /tmp/nope.json`` used to fail only once the model had loaded
(tens of seconds on a CPU). :func:`check_named_files` reads the small files a config names
(the calibrator, the probe file, the faithfulness map) and checks that the model path and
the chosen faithfulness backend's file settings point at something, so a typo fails at once
with one line naming the option and the file. Nothing here loads a model.
"""
from __future__ import annotations

from pathlib import Path

from franq.config import FranqConfig
from franq.errors import InputError

KEEP_WORDS = ("default", "none")
"""``--calibrator`` values that are not files."""


def looks_like_path(text: str) -> bool:
    """A setting written as a filesystem path (absolute, ``./``, ``../``, ``~``), not a name
    to look up (a Hugging Face cache name, a spaCy package)."""
    return Path(text).expanduser().is_absolute() or text.startswith((".", "~")) or "\\" in text


def check_named_files(cfg: FranqConfig) -> None:
    """An :class:`InputError` naming the option and the file for the first file ``cfg``
    names that is missing or unreadable: the model (``--model``, ``--gguf-file``), the
    calibrator (``--calibrator``), the probe file, the faithfulness map, and path-valued
    settings of the chosen faithfulness backend. Cheap: reads small JSON files, no model."""
    from franq.lm.load import check_gguf, check_model_dir

    m = cfg.model
    if m.gguf_file is not None:
        gguf = Path(m.gguf_file) if m.path is None else Path(m.path).expanduser() / m.gguf_file
        check_gguf(gguf, "--gguf-file / [model] gguf_file")
    elif m.path is not None:
        check_model_dir(m.path, "--model / [model] path")
    _check_calibrator(cfg.calibration.calibrator)
    if m.probe_file is not None:
        from franq.internals.probe_file import ProbeFile

        _exists(m.probe_file, "[model] probe_file")
        ProbeFile.load(m.probe_file)
    if cfg.faithfulness.map is not None:
        from franq.faithfulness.logistic import LogisticMap

        _exists(cfg.faithfulness.map, "[faithfulness] map")
        LogisticMap.from_json(cfg.faithfulness.map)
    _check_backend_paths(cfg)


def _exists(path: str, option: str) -> None:
    p = Path(path).expanduser()
    if not p.exists():
        raise InputError(f"{option}: no file at {path}")
    if p.is_dir():
        raise InputError(f"{option}: {path} is a directory, not a file")


def _check_calibrator(setting: str | None) -> None:
    from franq.calibrate import calibrator_entries, load_user_calibrator

    for entry in calibrator_entries(setting):  # one, or several separated by commas
        if entry not in KEEP_WORDS:
            _exists(entry, "--calibrator / [calibration] calibrator")
            load_user_calibrator(entry)  # the same line the pipeline would give, only sooner


def _check_backend_paths(cfg: FranqConfig) -> None:
    """String settings of the chosen faithfulness backend written as paths must exist
    (names such as a cached model's are left to the backend)."""
    name = cfg.faithfulness.name
    try:
        values = cfg.settings_for("faithfulness", name)
    except (InputError, KeyError, LookupError):
        return  # an unknown backend is refused, with its reason, when the pipeline builds it
    for key, value in values.items():
        if isinstance(value, str) and looks_like_path(value) and not Path(value).expanduser().exists():
            raise InputError(f"[faithfulness.{name}] {key}: no file or directory at {value}")


def check_batch_paths(input_path: str, output: str | None, errors_path: str | None) -> None:
    """The batch runner's own first checks (:func:`franq.runners.local.run_jsonl`: the input
    exists; input, output, error and recovery files are four different files), made before
    :func:`check_named_files` so a path mistake is the error shown; the runner makes them again."""
    from franq.runners.paths import FILE, check_distinct, check_input, output_kind

    check_input(input_path)
    file = output_kind(output) == FILE
    check_distinct({"input": input_path, "output": "-" if output is None else output,
                    "error file": errors_path or (output + ".errors.jsonl" if file else None),
                    "recovery file": output + ".recovered" if file else None})
