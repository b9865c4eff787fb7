"""``franq bench NAME``: the quality evaluations beside the paper's tables, each a thin command
over a module of :mod:`franq.evaluation` (options as the scripts they replace had them).

    faithfulness    franq.evaluation.faithfulness_backends  faithfulness backends on ExpertQA test
    faithfulness-sets franq.evaluation.faithfulness_sets    every backend on every verifier dev set (defaults)
    calibration     franq.evaluation.calibrators            every calibrator variant, train -> test or K-fold
    judges          franq.evaluation.equivalence_judges     equivalence judges on nq-open answer pairs
    short           franq.evaluation.short_cost             short-form cost and judge choice (--summarize)
    observer        franq.evaluation.observer_pairs         observer short form on right / wrong answer pairs
    se-probe        franq.evaluation.se_probe               semantic entropy probes vs sampled SE
    internals       franq.evaluation.internals_probes       faithfulness and truth from the pass's internals
    internals-data  franq.evaluation.internals_cache        the feature cache the internals table reads
    decompose       franq.evaluation.decomposition          sentence splitter vs LLM decomposer
    atomic          franq.evaluation.atomic_claims          sentence splitter vs atomic decomposer
    sample-records  franq.evaluation.data.sample_records    a seeded sample of JSONL records

Repository paths are under ``--root`` (default: the current folder); raw public files come
from ``--raw`` or ``$FRANQ_RAW_DATA`` (:func:`franq.evaluation.data.raw_data_dir`).
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from franq.cli.bench import ROOT_OPTION, bench
from franq.cli.options import AMOUNT, COUNT, COUNT_OR_ZERO, PROBABILITY, Number

PATH = click.Path(path_type=Path)
RAW_OPTION = click.option("--raw", type=click.Path(file_okay=False, path_type=Path), default=None,
                          help="Raw data folder (default: $FRANQ_RAW_DATA).")


def _command(name: str) -> str:
    """The command line a results file records."""
    argv = sys.argv[1:]
    return "franq " + " ".join(argv) if argv[:2] == ["bench", name] else f"franq bench {name}"


def _under(root: Path, path: Path | None, default: str) -> Path:
    return path if path is not None else root / default


@bench.command("faithfulness")
@click.option("--test", type=PATH, default=None, help="Labelled ExpertQA test file (default: ROOT/datasets/expertqa/test.jsonl).")
@click.option("--test-scores", type=PATH, default=None, help="franq score output of --test (embedded stack).")
@click.option("--judge-claims", type=COUNT_OR_ZERO, default=0, show_default=True, help="Run the SmolLM2 judge on the first N claims.")
@click.option("--speed-claims", type=COUNT, default=200, show_default=True)
@click.option("--repeats", type=COUNT, default=3, show_default=True)
@click.option("--out", type=PATH, default=None)
@ROOT_OPTION
def faithfulness(test, test_scores, judge_claims, speed_claims, repeats, out, root):
    """Faithfulness backends on ExpertQA test (human support labels) and the AlignScore batching speed."""
    from franq.evaluation.faithfulness_backends import run

    run(_under(root, test, "datasets/expertqa/test.jsonl"), test_scores=test_scores, judge_claims=judge_claims,
        speed_claims=speed_claims, repeats=repeats, out=out, command=_command("faithfulness"))


@bench.command("faithfulness-sets")
@click.option("--backends", default="lexical,combined,verifier", show_default=True,
              help="Text backends, run on every pair.")
@click.option("--lm-backends", default="", help="Backends that read the LM passes (context_pmi,lookback,hidden_probe), "
              "run through the pipeline on the first --lm-pairs of each set.")
@click.option("--lm-pairs", type=COUNT_OR_ZERO, default=100, show_default=True)
@click.option("--limit", type=COUNT, default=None, help="At most this many pairs per set.")
@click.option("--sets", default="", help="Only these dev sets (comma-separated names).")
@click.option("--build", is_flag=True, help="(Re)build datasets/verifier/dev from the raw files first.")
@click.option("--out", type=PATH, default=None, help="Default: ROOT/benchmarks/results/faithfulness-sets.md.")
@ROOT_OPTION
@RAW_OPTION
def faithfulness_sets(backends, lm_backends, lm_pairs, limit, sets, build, out, root, raw):
    """Every faithfulness backend on every held-apart dev set: BAcc at 0.5, AUROC, ms/pair."""
    from franq.evaluation import faithfulness_sets as fs
    from franq.evaluation.data import raw_data_dir

    dev_dir = root / "datasets" / "verifier" / "dev"
    if build:
        fs.write_dev_sets(raw_data_dir(raw), root / "datasets", root / "datasets" / "verifier" / "manifest.json",
                          dev_dir)
    fs.run(root / "datasets", dev_dir, backends=tuple(b for b in backends.split(",") if b),
           lm_backends=tuple(b for b in lm_backends.split(",") if b), lm_pairs=lm_pairs, limit=limit,
           only=tuple(s for s in sets.split(",") if s), out=_under(root, out, "benchmarks/results/faithfulness-sets.md"),
           command=_command("faithfulness-sets"))


@bench.command("calibration")
@click.option("--train-scored", default=None)
@click.option("--test-scored", default=None)
@click.option("--cv", type=COUNT_OR_ZERO, default=0, show_default=True, help="Grouped K-fold on --cv-scored instead of train -> test.")
@click.option("--cv-scored", default=None, help="Scored file for --cv (default: the scored test split).")
@click.option("--out", type=PATH, default=None, help="Default: ROOT/benchmarks/results/calibration-cv.md.")
@ROOT_OPTION
def calibration(train_scored, test_scored, cv, cv_scored, out, root):
    """Every FRANQ calibrator variant and the XGBoost baselines on scored ExpertQA."""
    from franq.evaluation.calibrators import run

    run(root, train_scored=train_scored, test_scored=test_scored, cv=cv, cv_scored=cv_scored, out=out,
        command=_command("calibration"))


@bench.command("judges")
@click.option("--questions", type=COUNT, default=30, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--model", default=None)
@RAW_OPTION
def judges(questions, seed, model, raw):
    """Equivalence judges on labelled answer pairs from nq-open-oracle gold answers."""
    from franq.evaluation.equivalence_judges import run

    run(questions=questions, seed=seed, model=model, raw=raw)


@bench.command("short")
@click.option("--questions", type=COUNT, default=12, show_default=True)
@click.option("--n", type=COUNT, default=10, show_default=True)
@click.option("--max-new-tokens", type=COUNT, default=24, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--model", default=None)
@click.option("--lm-judge-closed", is_flag=True)
@click.option("--out", type=PATH, default=None, help="Default: ROOT/benchmarks/results/short-form-cost.jsonl.")
@click.option("--summarize", metavar="JSONL", type=PATH, default=None, help="Print the tables of a finished run.")
@ROOT_OPTION
@RAW_OPTION
def short(questions, n, max_new_tokens, seed, model, lm_judge_closed, out, summarize, root, raw):
    """Short-form FRANQ cost per question and the equivalence-judge choice (nq-open-oracle sample)."""
    from franq.evaluation import short_cost

    if summarize:
        short_cost.summarize(summarize)
    else:
        short_cost.run(questions=questions, n=n, max_new_tokens=max_new_tokens, seed=seed, model=model,
                       lm_judge_closed=lm_judge_closed, out=_under(root, out, "benchmarks/results/short-form-cost.jsonl"),
                       raw=raw)


@bench.command("observer")
@click.option("--n-train", type=COUNT, default=300, show_default=True)
@click.option("--n-test", type=COUNT, default=200, show_default=True)
@click.option("--n-boot", type=COUNT, default=1000, show_default=True)
@click.option("--fit", is_flag=True, help="Write the observer calibrator into --out-dir.")
@click.option("--out-dir", type=PATH, default=None,
              help="Where --fit writes (default: ROOT/benchmarks/cache; the shipped one is rebuilt by `franq fit shipped`).")
@click.option("--observe-only", type=click.Choice(["train", "test"]), default=None,
              help="Only fill the cache of one split (run one process per split in parallel), then stop.")
@ROOT_OPTION
@RAW_OPTION
def observer(n_train, n_test, n_boot, fit, out_dir, observe_only, root, raw):
    """Observer short form: does FRANQ rank the right answer above a wrong one to the same question?"""
    from franq.evaluation.observer_pairs import run

    run(root, raw=raw, n_train=n_train, n_test=n_test, n_boot=n_boot, fit=fit, out_dir=out_dir,
        observe_only=observe_only, command=_command("observer"))


@bench.command("se-probe")
@click.option("--n-train", type=COUNT, default=300, show_default=True)
@click.option("--n-test", type=COUNT, default=200, show_default=True)
@click.option("--time-n", type=COUNT, default=20, show_default=True)
@click.option("--write", metavar="DIR", type=PATH, default=None,
              help="Write the probe file and the probe-preset calibrator into DIR (the shipped ones are rebuilt "
                   "by `franq fit shipped`).")
@click.option("--out", type=PATH, default=None, help="Default: ROOT/benchmarks/results/se-probe.md.")
@ROOT_OPTION
def se_probe(n_train, n_test, time_n, write, out, root):
    """Semantic entropy probes (short form): fit on nq-open train, compare with sampled SE on test."""
    from franq.evaluation.se_probe import run

    run(root, n_train=n_train, n_test=n_test, time_n=time_n, write=write, out=out, command=_command("se-probe"))


@bench.command("internals")
@click.option("--write-probes", metavar="PATH", type=PATH, default=None,
              help="Write the fitted probes (with the shipped SE probes) to PATH; the shipped file itself is "
                   "rebuilt by `franq fit shipped probe-SmolLM2-135M-Instruct.Q4_1.json`.")
@click.option("--capture-ms", type=AMOUNT, default=None,
              help="Capture overhead per claim in ms, added to the probes' ms/claim.")
@click.option("--no-wice-fit", is_flag=True,
              help="Fit the faithfulness probes on ExpertQA train only (default: also WiCE's fit part).")
@click.option("--out", type=PATH, default=None)
@ROOT_OPTION
def internals(write_probes, capture_ms, no_wice_fit, out, root):
    """Faithfulness and truth signals from the pass's internals, on held-apart data."""
    from franq.evaluation.internals_probes import run

    run(root, write_probes=write_probes, capture_ms=capture_ms, no_wice_fit=no_wice_fit, out=out,
        command=_command("internals"))


@bench.command("internals-data")
@click.argument("dataset", type=PATH)
@click.option("--max-prompt-tokens", type=COUNT, default=3000, show_default=True)
@click.option("--limit", type=COUNT_OR_ZERO, default=0, show_default=True)
@ROOT_OPTION
def internals_data(dataset, max_prompt_tokens, limit, root):
    """Cache claim-level internals features of a labelled dataset (embedded model; resumable)."""
    from franq.evaluation.internals_cache import run

    run(root, dataset, max_prompt_tokens=max_prompt_tokens, limit=limit)


@bench.command("decompose")
@RAW_OPTION
@click.option("--sample", type=COUNT, default=30, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--threshold", type=PROBABILITY, default=0.5, show_default=True)
@click.option("--max-tokens", type=COUNT, default=384, show_default=True)
@click.option("--cache-dir", type=PATH, default=None, help="Default: ROOT/benchmarks/cache/decompose.")
@click.option("--max-seconds", type=Number(0.0, low_open=True), default=None,
              help="Stop the LLM decomposer after this long and report the answers done.")
@click.option("--limit", type=COUNT, default=None, help="Run the LLM decomposer on the first LIMIT answers of the sample only.")
@click.option("--no-llm", is_flag=True)
@click.option("--out", type=PATH, default=None)
@click.option("--md", type=PATH, default=None, help="Also write the table as markdown.")
@ROOT_OPTION
def decompose(raw, sample, seed, threshold, max_tokens, cache_dir, max_seconds, limit, no_llm, out, md, root):
    """Decomposition quality on ExpertQA: the offline sentence splitter vs the LLM decomposer."""
    from franq.evaluation.decomposition import run

    run(raw=raw, sample=sample, seed=seed, threshold=threshold, max_tokens=max_tokens,
        cache_dir=_under(root, cache_dir, "benchmarks/cache/decompose"), max_seconds=max_seconds, limit=limit,
        no_llm=no_llm, out=out, md=md)


@bench.command("atomic")
@ROOT_OPTION
@RAW_OPTION
def atomic(root, raw):
    """Atomic decomposition against human claims: sentence splitter vs dependency-parse decomposer."""
    from franq.evaluation.atomic_claims import run

    run(root, raw=raw, command=_command("atomic"))


@bench.command("sample-records")
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("target", type=PATH)
@click.option("--n", type=COUNT, required=True)
@click.option("--seed", type=int, default=0, show_default=True)
def sample_records(source, target, n, seed):
    """Draw a seeded sample of JSONL records (reproduces the calibration training sample)."""
    from franq.evaluation.data import sample_records as draw
    from franq.files import check_outputs

    check_outputs({"TARGET": target}, {"SOURCE": source})  # never overwrite the records it draws from
    click.echo(draw(source, target, n=n, seed=seed))
