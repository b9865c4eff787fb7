"""``franq answer``: generate an answer from the passages and score its claims; with
``--verify`` / ``--fallback`` / ``--policy`` the answering application
(:class:`franq.apps.answering.Answerer`, paper 000) also decides: answer, fall back or abstain."""
from __future__ import annotations

import click

from calibration.base import MissingDependencyError
from franq.cli.options import (
    DEFAULTS, PROGRESS_OPTION, RAW_CSV_OPTION, THRESHOLD_OPTION, Number, StackFlags, StageProgress, fail, interactive,
    load_pipeline, printable, stack, stack_files,
)
from franq.cli.preflight import check_named_files
from franq.cli.score import HTML_OPTION, print_result
from franq.cli.table import format_decision
from franq import registry
from franq.errors import FranqError
from franq.files import check_outputs
from franq.io import parse_example, parse_passages
from franq.limits import check, check_inputs
from franq.lm.prompts import SHORT_ANSWER_TOKENS
from franq.results import ResultLine

CHECKS = registry.names("checks")  # the answering app's, then plugins' (entry point group franq.checks)


@click.command()
@click.option("-q", "--question", required=True, help="The question.")
@click.option("-p", "--passage", "passages", multiple=True, required=True, help="A retrieved passage (repeat).")
@click.option("--max-new-tokens", type=click.IntRange(min=1), default=None,
              help=f"Longest answer to generate (default: the config's, {DEFAULTS.model.max_new_tokens}). Short form: "
                   f"{SHORT_ANSWER_TOKENS} unless given, to the end of its line; one that reaches it ends at its last "
                   "sentence end.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table",
              help="Output format (the table starts with the generated answer).")
@RAW_CSV_OPTION
@HTML_OPTION
@THRESHOLD_OPTION
@click.option("--quiet", is_flag=True, help="No progress bar (shown on a terminal only, or with --progress).")
@PROGRESS_OPTION
@click.option("--verify", type=click.Choice(CHECKS),
              default=None, help="Check the answer with this answer check (answering with faithfulness, paper 000): trivial, pre_answer "
                                 "(yes/no before answering), nli (the faithfulness backend on 'The answer to the "
                                 "question ... is ...'), dual (with vs without passages), p_true (FRANQ), "
                                 "self_p_true (the model's own P(True)), or a plugin's.")
@click.option("--fallback", default=None,
              help="When the answer check says no: closed_book (answer without passages), abstain, model (the "
                   "config's [fallbacks.model] path, a second model with the passages).")
@click.option("--policy", "policy_path", type=click.Path(exists=True, dir_okay=False),
              help="Threshold policy JSON from `franq selective threshold` (sets the check, fallback and threshold).")
@click.option("--verify-threshold", type=Number(), default=None,
              help="Answer when the check's score is at least this (default: the policy's; else 0.5, 0 for dual; above every score: always fall back).")
@stack
def answer(question, passages, max_new_tokens, fmt, raw_csv, html_path, threshold, quiet, progress_lines, verify,
           fallback, policy_path, verify_threshold, stack: StackFlags):
    """Generate an answer with the model from the passages, then score its claims; with
    --verify / --fallback / --policy, also decide: answer, fall back or abstain."""
    from franq.apps.answering import Answerer

    try:
        inputs = {"--policy": policy_path, **stack_files(stack)}
        check_outputs({"--html": html_path}, inputs)
        cfg = stack.config(threshold=threshold)
        check_outputs({"--html": html_path}, {**inputs, **stack_files(stack, cfg)})
        check_inputs(question, parse_passages(list(passages)), limits=cfg.limits)  # before the model loads
        check("max_new_tokens", max_new_tokens or 1, subject="--max-new-tokens", limits=cfg.limits)
        check_named_files(cfg)  # a missing calibrator, model or probe fails now, not after the model loads
        with StageProgress(not quiet and (interactive() or progress_lines), "franq answer",
                           lines=not interactive()) as progress:
            pipeline = load_pipeline(cfg)
            progress()
            progress.attach(pipeline)
            result = Answerer(pipeline).answer(question, list(passages), max_new_tokens=max_new_tokens,
                                               verify=verify, fallback=fallback, policy=policy_path,
                                               threshold=verify_threshold)
        ex = parse_example({"question": question, "passages": list(passages), "answer": result.scored_answer})
    except (FranqError, MissingDependencyError) as exc:
        raise fail(exc) from None
    if fmt == "table":  # the answer to show: after a fallback, the fallback's (the rejected one: its claims below)
        shown = "(abstained)" if result.decision is not None and result.decision.action == "abstain" else result.answer
        click.echo(printable(f"Answer: {shown.strip()}") + "\n")
    print_result(ResultLine("", None, result, ex), fmt, html_path, raw_csv=raw_csv, threshold=cfg.calibration.threshold)
    if fmt == "table" and result.decision is not None:
        click.echo(format_decision(result))
