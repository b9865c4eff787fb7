"""The ``franq`` command: thin; parses arguments, calls the API, prints."""
from __future__ import annotations

import json
import logging
import re
import sys
from importlib import resources
from pathlib import Path

import click

from calibration.base import MissingDependencyError
from franq.config import FranqConfig
from franq.errors import FranqError, InputError, redact
from franq.io import Example, load_json, parse_example
from franq.runners.base import BATCH_TOKENS
from franq.runners.local import score_file
from franq.runners.paths import check_distinct
from franq.runners.records import MAX_PASSAGE_CHARS, MAX_RECORD_BYTES, result_record
from franq.types import AnswerScore

MODE_OPTION = click.option(
    "--mode", type=click.Choice(["long", "short", "auto"]), default=None,
    help="Preset: long (claims, token probabilities), short (the answer is one claim, scored from "
         "samples) or auto (a single short sentence is short). Default: the config's (long).")


MODEL_OPTIONS = [
    click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False),
                 help="TOML or JSON config file (sections: model, decomposer, faithfulness, uq, "
                      "calibration, batch; see README)."),
    click.option("--model", help="Causal LM: a local directory or a locally cached name (default: the "
                                 "embedded SmolLM2). Sets [model] path."),
    click.option("--gguf-file", help="A GGUF file inside --model, or a path to one."),
    click.option("--device", help="cpu, cuda, cuda:1, mps (default: cuda if available, else cpu)."),
    click.option("--dtype", type=click.Choice(["float32", "bfloat16", "float16", "auto"]), default=None,
                 help="Model weights' dtype (default: float32 on cpu, bfloat16 on a GPU)."),
    click.option("--threads", type=click.IntRange(min=1), default=None,
                 help="Torch CPU threads (default: OMP_NUM_THREADS if set, else half the usable cores, "
                      "1 to 8: 1 on a 2-core machine). Sets [model] threads."),
]
"""The options that choose the model (commands that only run its passes, like fit-probe)."""


def model_options(f):
    for option in reversed(MODEL_OPTIONS):
        f = option(f)
    return f


def stack_options(f):
    """The common choices, as flags over the config file (help text on every one)."""
    options = [
        *MODEL_OPTIONS,
        click.option("--faithfulness", help="Faithfulness backend: combined (default), lexical, context_pmi, "
                                            "alignscore, nli, judge, lookback, probe, or a plugin's name."),
        click.option("--calibrator", help="'default' (the shipped calibrator fitted for this stack, if any), "
                                          "'none', or a file from `franq calibrate`."),
        MODE_OPTION,
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _config(config_path: str | None = None, **flags) -> FranqConfig:
    """The config file (or the defaults) with the flags that were given on top."""
    cfg = FranqConfig.from_file(config_path) if config_path else FranqConfig()
    keys = {"model": "model.path", "gguf_file": "model.gguf_file", "device": "model.device",
            "dtype": "model.dtype", "threads": "model.threads", "faithfulness": "faithfulness.name", "calibrator": "calibration.calibrator",
            "calibrator_mismatch": "calibration.on_mismatch", "mode": "mode", "decomposer": "decomposer.name",
            "decomposer_model": "decomposer.model", "decomposer_base_url": "decomposer.base_url",
            "decomposer_backend": "decomposer.backend", "threshold": "calibration.threshold"}
    unknown = set(flags) - set(keys)
    if unknown:
        raise TypeError(f"_config: unknown flags {sorted(unknown)}")
    return cfg.with_overrides({keys[k]: v for k, v in flags.items()})


def _load(cfg: FranqConfig):
    from franq.pipeline import Franq

    return Franq.from_config(cfg)


_CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text) -> str:
    """``text`` safe for a terminal, secrets masked: control characters (escape sequences,
    carriage returns, newlines, bidirectional overrides) shown as ``\\x1b``-style escapes."""
    return _CONTROL_RE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), redact(str(text)))


def fail(exc: BaseException) -> click.ClickException:
    """A franq error as the CLI's one-line error (secrets masked, control characters escaped)."""
    return click.ClickException(printable(exc))


class _RedactingFilter(logging.Filter):
    """Every log line franq prints goes through :func:`printable`."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = printable(record.getMessage()), None
        return True


def _fmt(p: float | None, small: bool = False) -> str:
    if p is None:
        return "-"
    return f"{p:.2e}" if small and p < 0.01 else f"{p:.3f}"


def _preset_name(result: AnswerScore) -> str:
    """"long", "short", or "short (observer)" when a given short answer was scored as an observer."""
    preset = result.stack.get("mode", result.mode)
    return result.mode if preset == result.mode else f"{result.mode} ({preset})"


def format_table(result: AnswerScore, width: int = 100) -> str:
    """Per claim: calibrated P(true) (when a calibrator ran), then the raw values."""
    cal = result.calibrator
    source = f"{cal.variant}, {cal.source} file {cal.path}" if cal else "none (raw values only)"
    s = result.stack
    lines = [
        f"Question: {printable(result.question)}",
        printable(f"Model: {result.model} | preset: {_preset_name(result)} | faithfulness: {result.faithfulness} | "
                  f"UQ_faith: {s.get('uq_faith', '?')} | UQ_unfaith: {s.get('uq_unfaith', '?')}"),
        f"Calibration: {printable(source)}",
        "",
        f"{'#':>2}  {'P(true)':>8}  {'P(true)':>8}  {'P_faith':>8}  {'UQ_faith':>8}  {'UQ_unf.':>8}  claim",
        f"{'':>2}  {'calib.':>8}  {'raw':>8}  {'raw':>8}  {'raw':>8}  {'raw':>8}",
    ]
    for i, c in enumerate(result.claims, 1):
        text = printable(c.claim.text if c.status == "scored" else f"[{c.status}: {c.claim.note}] {c.claim.text}")
        if len(text) > width:
            text = text[: width - 1] + "…"
        lines.append(f"{i:>2}  {_fmt(c.p_true_calibrated):>8}  {_fmt(c.p_true_raw, True):>8}  "
                     f"{_fmt(c.p_faithful):>8}  {_fmt(c.uq_faith, True):>8}  {_fmt(c.uq_unfaith, True):>8}  {text}")
    for w in result.warnings:
        lines.append(f"warning: {printable(w)}")
    return "\n".join(lines)


def _verbose(ctx, param, value) -> None:
    if value:
        logging.getLogger().setLevel(logging.INFO)


VERBOSE_OPTION = click.Option(["-v", "--verbose"], is_flag=True, expose_value=False, callback=_verbose,
                              help="Log progress and model loading.")
"""``-v`` after any subcommand too (``franq score --example -v``); added to each by :func:`_add_verbose`."""


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Log progress and model loading.")
@click.version_option(package_name="franq")
def main(verbose: bool) -> None:
    """franq: is each claim of a RAG answer true? (FRANQ)"""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, _RedactingFilter) for f in handler.filters):
            handler.addFilter(_RedactingFilter())


@main.command()
@click.argument("input_path", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True),
              help="Output JSONL (batch mode). Default: standard output.")
@click.option("--errors", "errors_path", type=click.Path(dir_okay=False),
              help="Where bad records go (batch mode). Default: OUTPUT.errors.jsonl, or stderr.")
@click.option("-q", "--question", help="The question (with --passage and --answer).")
@click.option("-p", "--passage", "passages", multiple=True, help="A retrieved passage (repeat).")
@click.option("-a", "--answer", help="The answer to score.")
@click.option("--example", is_flag=True, help="Score the bundled example.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table",
              help="Output for a single example: a table, the JSON record, or CSV (one row per claim; for a "
                   "batch, `franq report OUT.jsonl --csv CLAIMS.csv`).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False),
              help="Also write a self-contained HTML report (claims coloured by P(true); see `franq report`).")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=None,
              help="Add a verdict to each scored claim: likely_true if P(true) >= T, else likely_false.")
@click.option("--decomposer", default=None,
              help="Claims: 'sentence' (default: offline splitter), 'llm' (atomic claims from a chat model: "
                   "the scoring model, or a server with --decomposer-base-url), or a plugin's name.")
@click.option("--decomposer-model", help="LLM decomposer: server model name, or local model path.")
@click.option("--decomposer-base-url", help="LLM decomposer: OpenAI-compatible server URL, e.g. "
                                            "http://localhost:8000/v1 (API key from $OPENAI_API_KEY).")
@click.option("--calibrator-mismatch", type=click.Choice(["warn", "error", "force"]), default=None,
              help="If the calibrator was fitted for another stack: warn and skip it (default), "
                   "error, or force it.")
@click.option("--quiet", is_flag=True, help="No progress bar (one answer: shown on a terminal only).")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Batch mode: score in this process, or on Ray Data actors (pip install 'franq[ray]').")
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="Ray: number of actors, each with one loaded model.")
@click.option("--cpus-per-worker", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="Ray: CPUs reserved per actor.")
@click.option("--gpus-per-worker", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Ray: GPUs reserved per actor (fractions share a GPU).")
@click.option("--ray-address", default=None,
              help="Ray: cluster address ('auto' = the running cluster). Default: a local Ray.")
@click.option("--batch-tokens", type=click.IntRange(min=0), default=BATCH_TOKENS, show_default=True,
              help="Batch mode: answers per scoring call, by estimated tokens (0 = one answer per call).")
@click.option("--max-record-bytes", type=click.IntRange(min=1), default=MAX_RECORD_BYTES, show_default=True,
              help="Batch mode: a JSONL line longer than this is a bad record.")
@click.option("--max-passage-chars", type=click.IntRange(min=1), default=MAX_PASSAGE_CHARS, show_default=True,
              help="Batch mode: a passage longer than this is a bad record.")
@stack_options
def score(input_path, output, errors_path, question, passages, answer, example, fmt, html_path, threshold,
          calibrator_mismatch, quiet, engine, workers, cpus_per_worker, gpus_per_worker, ray_address, batch_tokens,
          max_record_bytes, max_passage_chars, decomposer, decomposer_model, decomposer_base_url, config_path, model,
          gguf_file, device, dtype, threads, faithfulness, calibrator, mode):
    """Score one example (flags, --example or a .json file) or a JSONL file of examples.

    A JSONL line is {"id", "question", "passages": [str | {"title", "text"}], "answer",
    "claims"?}. Each result is one JSON line; a malformed line becomes an error record
    naming the line and field, and the run carries on. Rerunning with the same -o
    resumes: records already in OUT are skipped.
    """
    try:
        cfg = _config(config_path, model=model, gguf_file=gguf_file, device=device, dtype=dtype, threads=threads,
                      faithfulness=faithfulness, calibrator=calibrator, calibrator_mismatch=calibrator_mismatch,
                      mode=mode, decomposer=decomposer, decomposer_model=decomposer_model,
                      decomposer_base_url=decomposer_base_url,
                      decomposer_backend="openai" if decomposer_base_url else None, threshold=threshold)
        if input_path and (input_path == "-" or input_path.endswith(".jsonl")):
            if fmt == "csv":
                raise InputError("--format csv: a batch is written as JSONL (resumable); turn it into CSV with "
                                 "`franq report OUT.jsonl --csv CLAIMS.csv`")
            if html_path and output in (None, "-"):
                raise InputError("--html: a batch report is made from the output file; give -o OUT.jsonl")
            summary = score_file(cfg, input_path, output, errors_path=errors_path,
                                 progress=not quiet, engine=engine, workers=workers,
                                 cpus_per_worker=cpus_per_worker, gpus_per_worker=gpus_per_worker,
                                 ray_address=ray_address, batch_tokens=batch_tokens,
                                 max_record_bytes=max_record_bytes,
                                 max_passage_chars=max_passage_chars)
            click.echo(printable(summary.message()), err=True)
            if html_path:
                _write_html(html_path, output)
            return
        ex = _single_example(input_path, question, passages, answer, example)
        with _StageProgress(not quiet and _interactive(), "franq score") as progress:
            pipeline = _load(cfg)
            progress()
            result = pipeline.score_many([ex])[0]
    except (FranqError, MissingDependencyError) as exc:
        raise fail(exc) from None
    _print_result(result_record(ex.id, result, ex), result, fmt, html_path)


def _print_result(record: dict, result: AnswerScore, fmt: str, html_path: str | None) -> None:
    if fmt == "json":
        click.echo(json.dumps(record, ensure_ascii=False))
    elif fmt == "csv":
        from franq.apps.render import csv_text

        click.echo(csv_text([record]), nl=False)
    else:
        click.echo(format_table(result))
    if html_path:
        from franq.apps.render import report_html

        Path(html_path).write_text(report_html([record], title=f"franq: {record['question'][:80]}"), encoding="utf-8")
        click.echo(f"wrote {html_path}", err=True)


def _write_html(html_path: str, scores_path: str) -> None:
    from franq.apps.render import report_html
    from franq.apps.report import read_records

    records = list(read_records([scores_path], warn=lambda msg: click.echo(f"warning: {msg}", err=True)))
    Path(html_path).write_text(report_html(records), encoding="utf-8")
    click.echo(f"wrote {html_path}: {len(records)} answers", err=True)


def _interactive() -> bool:
    return sys.stderr.isatty()


class _StageProgress:
    """A two-step progress bar on stderr for one answer (loading the model, then scoring),
    which take tens of seconds to minutes on a CPU. Its elapsed time ticks every half
    second while a step runs (a step gives no finer progress); ``-v`` logs inside them."""

    TICK_SECONDS = 0.5

    def __init__(self, enabled: bool, desc: str):
        self.enabled = enabled
        self.desc = desc
        self.bar = None
        self._done = None

    def __enter__(self):
        if self.enabled:
            import threading

            from tqdm import tqdm

            self.bar = tqdm(total=2, desc=f"{self.desc}: loading the model", file=sys.stderr, leave=False,
                            bar_format="{desc} [{elapsed}] {n_fmt}/{total_fmt}")
            self._done = threading.Event()
            threading.Thread(target=self._tick, daemon=True).start()
        return self.step

    def _tick(self) -> None:
        while not self._done.wait(self.TICK_SECONDS):
            self.bar.refresh()

    def step(self) -> None:
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_description_str(f"{self.desc}: scoring")

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self._done.set()
            self.bar.close()


def _single_example(input_path, question, passages, answer, example) -> Example:
    if example:
        text = resources.files("franq").joinpath("data/example.json").read_text(encoding="utf-8")
        return parse_example(json.loads(text), "bundled example")
    if input_path:
        try:
            text = Path(input_path).read_text(encoding="utf-8")
        except (OSError, ValueError) as exc:
            raise InputError(f"{input_path}: cannot read a JSON object: {exc}") from None
        return parse_example(load_json(text, input_path), input_path)
    if not (question and passages and answer):
        raise InputError("give --question, at least one --passage and --answer; or a JSON/JSONL "
                         "file; or --example")
    return parse_example({"question": question, "passages": list(passages), "answer": answer})


@main.command()
@click.option("-q", "--question", required=True, help="The question.")
@click.option("-p", "--passage", "passages", multiple=True, required=True, help="A retrieved passage (repeat).")
@click.option("--max-new-tokens", type=click.IntRange(min=1), default=None,
              help="Longest answer to generate (default: the config's, 256).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table",
              help="Output format (the table starts with the generated answer).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False),
              help="Also write a self-contained HTML report of the answer and its claims.")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=None,
              help="Add a verdict to each scored claim: likely_true if P(true) >= T, else likely_false.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--verify", type=click.Choice(["trivial", "pre_answer", "nli", "dual", "p_true", "self_p_true"]),
              default=None, help="Verify the answer (answering with faithfulness, paper 000): trivial, pre_answer "
                                 "(yes/no before answering), nli (the faithfulness backend on 'The answer to the "
                                 "question ... is ...'), dual (with vs without passages), p_true (FRANQ), "
                                 "self_p_true (the model's own P(True)).")
@click.option("--fallback", default=None,
              help="When the verifier says no: closed_book (answer without passages), abstain, model (the "
                   "config's [model] fallback_path, a second model with the passages) or model:PATH.")
@click.option("--policy", "policy_path", type=click.Path(exists=True, dir_okay=False),
              help="Threshold policy JSON from `franq selective threshold` (sets the verifier, fallback and threshold).")
@click.option("--verify-threshold", type=float, default=None,
              help="Answer when the verifier's score is at least this (default: the policy's; else 0.5, 0 for dual).")
@stack_options
def answer(question, passages, max_new_tokens, fmt, html_path, threshold, quiet, verify, fallback, policy_path,
           verify_threshold, config_path, model, gguf_file,
           device, dtype, threads, faithfulness, calibrator, mode):
    """Generate an answer with the model from the passages, then score its claims; with
    --verify / --fallback / --policy, also decide: answer, fall back or abstain."""
    try:
        cfg = _config(config_path, model=model, gguf_file=gguf_file, device=device, dtype=dtype, threads=threads,
                      faithfulness=faithfulness, calibrator=calibrator, mode=mode, threshold=threshold)
        with _StageProgress(not quiet and _interactive(), "franq answer") as progress:
            pipeline = _load(cfg)
            progress()
            result = pipeline.answer(question, list(passages), max_new_tokens=max_new_tokens, verify=verify,
                                     fallback=fallback, policy=policy_path, threshold=verify_threshold)
        ex = parse_example({"question": question, "passages": list(passages), "answer": result.answer})
    except (FranqError, MissingDependencyError) as exc:
        raise fail(exc) from None
    if fmt == "table":
        click.echo(printable(f"Answer: {result.answer.strip()}") + "\n")
    _print_result(result_record(None, result, ex), result, fmt, html_path)
    if fmt == "table" and result.decision is not None:
        click.echo(format_decision(result))


def format_decision(result: AnswerScore) -> str:
    d = result.decision
    if d is None:
        return ""
    lines = ["", f"Decision: {d.action} ({d.verify} score {d.score:.3f} "
                 f"{'>=' if d.action == 'answer' else '<'} threshold {d.threshold:g}; fallback {d.fallback})"]
    if d.action != "answer":
        lines.append(f"Answer: {d.answer if d.answer is not None else '(abstained)'}")
    return "\n".join(lines)


@main.command()
@click.argument("input_path", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Calibrator JSON to write.")
@click.option("--variant", type=click.Choice(["condition", "calibrated", "soft", "none"]), default="condition",
              show_default=True, help="FRANQ calibration variant (paper section 2.3; 'soft' is ours).")
@click.option("--calibrate-faithfulness", is_flag=True,
              help="Also calibrate P_faithful on gold 'is_faithful' labels (paper table 14).")
@click.option("--xgboost", "xgb_features", type=click.Choice(["franq", "all"]), default=None,
              help="Fit an XGBoost baseline instead, on the FRANQ features or on all UQ components.")
@click.option("--min-per-condition", type=int, default=30, show_default=True,
              help="Warn when a condition has fewer training claims than this.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False),
              help="Fit report JSON. Default: OUTPUT with .report.json.")
@click.option("--scored", "scored_path", type=click.Path(dir_okay=False),
              help="Raw input only: where to keep the scored claims. Default: OUTPUT with .scored.jsonl.")
@click.option("--holdout", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True), default=None,
              help="Hold this fraction of the answers apart (e.g. 0.2), fit on the rest and report ECE, Brier "
                   "and AUROC on the held-apart claims; the calibrator written is the one fitted on the rest.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed of the --holdout split.")
@stack_options
def calibrate(input_path, output, variant, calibrate_faithfulness, xgb_features, min_per_condition,
              report_path, scored_path, holdout, seed, config_path, model, gguf_file, device, dtype, threads,
              faithfulness,
              calibrator, mode):
    """Fit a calibrator on labelled claims.

    INPUT_PATH is JSONL: either `franq score` output whose claims carry `is_true` (and
    optionally `is_faithful`) labels, or raw examples with labelled claims
    ({"question", "passages", "answer", "claims": [{"text", "is_true", "is_faithful"}]}),
    which are scored first with the configured stack (--calibrator is ignored: raw values
    are fitted). Long and short form are calibrated alike; --mode short fits a short-form
    calibrator.
    """
    from franq.calibrate import (fit_franq_calibrator, fit_xgboost, holdout_metrics, is_scored_record, read_scored,
                                 split_holdout, training_claims)

    stem = output.removesuffix(".json").removesuffix(".safetensors")
    try:
        check_distinct({"input": input_path, "output": output, "report": report_path or stem + ".report.json",
                        "scored file (--scored)": scored_path or stem + ".scored.jsonl"})
        with open(input_path, encoding="utf-8") as f:
            first = next((line for line in f if line.strip()), None)
        if first is None:
            raise InputError(f"{input_path}: no records")
        try:
            first_obj = json.loads(first)
        except ValueError as exc:
            raise InputError(f"{input_path} line 1: not valid JSON ({exc})") from None
        if xgb_features:  # fail before scoring anything when xgboost is missing
            from calibration.boosted import require_xgboost

            require_xgboost()
        if not (isinstance(first_obj, dict) and is_scored_record(first_obj)):
            scored_path = scored_path or stem + ".scored.jsonl"
            cfg = _config(config_path, model=model, gguf_file=gguf_file, device=device, dtype=dtype, threads=threads,
                          faithfulness=faithfulness, mode=mode, calibrator="none")
            Path(scored_path).unlink(missing_ok=True)  # score afresh, as before (no resume here)
            click.echo(score_file(cfg, input_path, scored_path).message(), err=True)
            input_path = scored_path
        data = training_claims(read_scored(input_path))
        held = None
        if holdout is not None:
            data, held = split_holdout(data, holdout, seed=seed)
        if xgb_features:
            if not output.endswith(".json"):
                raise InputError(f"--output: XGBoost models are saved as JSON, the name must end in .json: {output}")
            cal, report = fit_xgboost(data, features=xgb_features)
        else:
            cal, report = fit_franq_calibrator(data, variant=variant, calibrate_faithfulness=calibrate_faithfulness,
                                               min_per_condition=min_per_condition)
        if held is not None:
            report["holdout"] = {"fraction": holdout, "seed": seed, **holdout_metrics(
                cal, held, features=list(cal.feature_names) if xgb_features else None)}
    except (FranqError, ValueError) as exc:
        raise fail(exc) from None
    cal.to_json(output)
    report["file_bytes"] = Path(output).stat().st_size
    report_path = report_path or stem + ".report.json"
    Path(report_path).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    click.echo("\n".join(printable(line) for line in format_fit_report(report, output, report_path).split("\n")),
               err=True)


@main.command("fit-probe")
@click.argument("input_path", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Probe file to write: .json, or .safetensors (arrays as tensors, the rest as header metadata).")
@click.option("--features", "features", default="lookback,hidden:16", show_default=True,
              help="Feature sets, one probe each: lookback (Lookback Lens ratios), hidden:LAYER (hidden states "
                   "of the with-passages pass; hidden:8+16 pools two layers), hidden_closed:LAYER (the "
                   "closed-book pass), hidden_diff:LAYER (their difference); a suffix @last pools only "
                   "the last token (semantic entropy probes).")
@click.option("--folds", type=int, default=5, show_default=True, help="Cross-validation folds (grouped by answer).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False),
              help="Fit report JSON. Default: OUTPUT with .report.json.")
@model_options
def fit_probe(input_path, output, features, folds, report_path, config_path, model, gguf_file, device, dtype,
              threads):
    """Fit probes on a model's internals from labelled claims.

    INPUT_PATH is JSONL of raw examples with labelled claims ({"question", "passages",
    "answer", "claims": [{"text", "is_faithful", "is_true"}]}), as `franq calibrate` reads;
    for a semantic entropy probe, short answers whose one claim is the answer itself with
    its samples' "semantic_entropy" (a number). Each answer gets the with-passages pass with
    capture (and the closed-book pass when a feature set reads it); one logistic probe is
    fitted per label present (is_faithful -> the lookback / probe faithfulness backends,
    is_true -> the truth_probe scorer, semantic_entropy -> low_semantic_entropy, the
    se_probe scorers) and feature set, its C chosen by cross-validation grouped by answer.
    The file records the model, the features and the input's SHA-256; JSON or safetensors,
    never pickle.
    """
    import time

    from franq.probe import data_hash, fit_probe_file, labelled_features, parse_feature_specs, read_labelled

    stem = output.removesuffix(".json").removesuffix(".safetensors")
    try:
        specs = parse_feature_specs(features)
        examples = read_labelled(input_path)
        fr = _load(_config(config_path, model=model, gguf_file=gguf_file, device=device, dtype=dtype,
                           threads=threads, faithfulness="lexical", calibrator="none", mode="long"))  # only the passes run
        t = time.perf_counter()
        with click.progressbar(length=len(examples), label="passes", file=click.get_text_stream("stderr")) as bar:
            x, labels, groups = labelled_features(fr, examples, specs, progress=bar.update)
        passes_s = time.perf_counter() - t
        fitted_on = {"data": Path(input_path).name, "data_sha256": data_hash(input_path)}
        probes, skipped = fit_probe_file(fr.lm.name, specs, x, labels, groups, fitted_on=fitted_on, folds=folds)
    except (FranqError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    probes.save(output)
    report = {"model": probes.model, "input": input_path, "data_sha256": fitted_on["data_sha256"],
              "n_answers": len(set(groups)), "passes_seconds": round(passes_s, 2), "skipped": skipped,
              "probes": [{"target": p.target, "features": p.label, "n_claims": p.fitted_on["n_claims"],
                          "positive_rate": p.fitted_on["positive_rate"], "cv": p.cv} for p in probes.probes]}
    report_path = report_path or stem + ".report.json"
    Path(report_path).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    lines = [f"fitted {len(probes.probes)} probe(s) for {probes.model} on {report['n_answers']} answers "
             f"(passes {passes_s:.1f} s)"]
    lines += [f"  {p['target']:<12} {p['features']:<14} {p['n_claims']} claims, {p['positive_rate']:.0%} positive; "
              f"{p['cv']['folds']}-fold CV AUROC {p['cv']['auroc']:.3f}, PR-AUC {p['cv']['pr_auc']:.3f} "
              f"(C={p['cv']['C']:g})" for p in report["probes"]]
    lines += [f"skipped: {s}" for s in skipped]
    lines.append(f"wrote {output} and {report_path}")
    click.echo("\n".join(lines), err=True)


def format_fit_report(report: dict, output: str, report_path: str) -> str:
    name = report.get("variant") or f"xgboost on {report['features']}"
    lines = [f"fitted {name} on {report['n_claims']} labelled claims ({report['n_true']} true, "
             f"{report['n_false']} false; skipped {report['skipped']}) in {report['fit_seconds']:.3f} s",
             f"stack: {report['fitted_for']}"]
    for cond in ("faithful", "unfaithful"):
        c = report.get("counts", {}).get(cond)
        if c:
            lines.append(f"  {cond:>10}: {c['n']} claims, weight {c['weight']:g} "
                         f"({c['true']:g} true, {c['false']:g} false)")
    if "split" in report.get("counts", {}):
        s = report["counts"]["split"]
        lines.append(f"  split by gold label: {s['gold']}, by P_faithful > 0.5: {s['threshold']}")
    ece = report["train_ece"]
    lines.append("train ECE: " + ", ".join(f"{k} {v:.4f}" for k, v in ece.items()))
    h = report.get("holdout")
    if h:
        def num(v):
            return "n/a (one class)" if v is None else f"{v:.4f}"

        lines.append(f"held apart ({h['fraction']:g} of the answers, seed {h['seed']}): {h['n_claims']} claims of "
                     f"{h['n_answers']} answers ({h['n_true']} true)")
        for metric in ("ece", "brier", "auroc"):
            lines.append(f"  held-apart {metric.upper() if metric != 'brier' else 'Brier'}: raw "
                         f"{num(h['raw'][metric])}, calibrated {num(h['calibrated'][metric])}")
    lines += [f"warning: {w}" for w in report["warnings"]]
    lines.append(f"wrote {output} ({report['file_bytes']} bytes) and {report_path}")
    return "\n".join(lines)


def _add_apps(group: click.Group) -> None:
    """Each registered application (franq/apps/, or a ``franq.apps`` entry point) is a subcommand."""
    from franq import registry

    for name in registry.names("apps"):
        try:
            command = registry.lookup("apps", name)
        except InputError as exc:
            logging.getLogger(__name__).warning("%s", exc)
            continue
        group.add_command(command, name)


def _add_verbose(group: click.Group) -> None:
    for command in group.commands.values():
        if not any(p.name == "verbose" for p in command.params):
            command.params.append(VERBOSE_OPTION)


_add_apps(main)
_add_verbose(main)
