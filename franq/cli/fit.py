"""``franq fit ...``: the workbench's fitting commands (:mod:`franq.fit`)."""
from __future__ import annotations

import json
import os
import sys

import click

from franq.cli.options import COUNT, THREADS_OPTION, Number, StackFlags, fail, load_pipeline, model_stack, printable, stack, stack_files
from franq.cli.table import format_fit_report
from franq.errors import FranqError
from franq.files import check_outputs
from franq.presets import PRESETS

MAP_FILES = ("faithfulness-combined.json", "faithfulness-context-pmi.json")
"""What ``franq fit faithfulness`` writes into its folder."""


@click.group("fit")
def fit() -> None:
    """Fit what franq ships or you bring: calibrators, probes, faithfulness maps; rebuild the shipped files."""


@fit.command("calibrator")
@click.argument("input_path", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Calibrator JSON to write.")
@click.option("--variant", type=click.Choice(["condition", "calibrated", "soft", "none"]), default=None,
              help="FRANQ calibration variant (paper section 2.3; 'soft' is ours). Default: soft for three-condition "
                   "(the better on natural answers: benchmarks/results/calibration-natural.md), condition for binary.")
@click.option("--calibrate-faithfulness", is_flag=True,
              help="Also calibrate P_faithful on gold 'is_faithful' labels (paper table 14).")
@click.option("--xgboost", "xgb_features", type=click.Choice(["franq", "all"]), default=None,
              help="Fit an XGBoost baseline instead, on the FRANQ features or on all UQ components.")
@click.option("--min-per-condition", type=COUNT, default=30, show_default=True,
              help="Warn when a condition has fewer training claims than this (besides the measured label "
                   "count each map needs, which is always checked); a map with fewer than 10 is refused unless this "
                   "is set below 10 (then it is fitted, with the warning).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False),
              help="Fit report JSON. Default: OUTPUT with .report.json.")
@click.option("--scored", "scored_path", type=click.Path(dir_okay=False),
              help="Raw input only: where to keep the scored claims. Default: OUTPUT with .scored.jsonl.")
@click.option("--holdout", type=Number(0.0, 1.0, low_open=True, high_open=True), default=None,
              help="Hold this fraction of the answers apart (e.g. 0.2), fit on the rest and report ECE, Brier "
                   "and AUROC on the held-apart claims; the calibrator written is the one fitted on the rest.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed of the --holdout split and the folds.")
@click.option("--folds", type=click.IntRange(min=0), default=5, show_default=True,
              help="K-fold cross-validation by answer (0: none): held-out ECE, Brier, AUROC with 95% intervals, "
                   "a constant predictor's Brier and the threshold table. Ignored with --holdout.")
@click.option("--target-precision", type=click.FloatRange(0.0, 1.0), default=None,
              help="Pick the verdict threshold that catches the most false claims while at least this share of "
                   "the claims flagged likely_false are false (on held-out P(true)); stored in the calibrator, "
                   "used as calibration.threshold unless the config sets one.")
@click.option("--target-false-alarm", type=click.FloatRange(0.0, 1.0), default=None,
              help="Likewise, while at most this share of the true claims is flagged likely_false.")
@click.option("--prior", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True), default=None,
              help="The share of true claims where the calibrator will be used, if not the training data's: each "
                   "UQ map's output (the fast map's P(true)) is moved on the logit scale (see `franq fit prior`).")
@click.option("--three-condition/--binary", "three_condition", default=None,
              help="Three-condition FRANQ (P_s*T_s + P_c*T_c + P_n*T_n; variant condition, soft or none), the "
                   "shipped default's kind, or the paper's binary FRANQ. Default: three-condition when the claims "
                   "carry P_contradicted (the 'verifier' faithfulness backend, the default).")
@click.option("--flat", multiple=True, type=click.Choice(["supported", "contradicted", "not_mentioned"]),
              help="Three-condition: this condition's map is its share of true claims, whatever the UQ score "
                   "(repeatable; e.g. 'contradicted', whose UQ score on few short claims mostly measures length).")
@click.option("--preset", type=click.Choice(list(PRESETS)), default=None,
              help="Fit on the records scored by this preset only: `--mode auto` output holds long and short-form "
                   "records, `--fast` output fast and fast_short ones, and a calibrator is fitted for one.")
@stack
def calibrator(input_path, output, variant, calibrate_faithfulness, xgb_features, min_per_condition,
               report_path, scored_path, holdout, seed, folds, target_precision, target_false_alarm, prior,
               three_condition, flat, preset, stack: StackFlags):
    """Fit a calibrator on labelled claims.

    INPUT_PATH is JSONL: either `franq score` output whose claims carry `is_true` (and
    optionally `is_faithful`) labels, or raw examples with labelled claims
    ({"question", "passages", "answer", "claims": [{"text", "is_true", "is_faithful"}]}),
    which are scored first with the configured stack (--calibrator is ignored: raw values
    are fitted). Long and short form are calibrated alike; --mode short fits a short-form
    calibrator.
    """
    from franq.fit.calibrator import fit_calibrator_file

    try:
        check_outputs({"-o": output, "--report": report_path, "--scored": scored_path},
                      {"input": input_path, **stack_files(stack)})
        report, report_path = fit_calibrator_file(
            input_path, output, config=stack.config(calibrator="none"), variant=variant,
            calibrate_faithfulness=calibrate_faithfulness, xgb_features=xgb_features,
            min_per_condition=min_per_condition, report_path=report_path, scored_path=scored_path,
            holdout=holdout, seed=seed, three_condition=three_condition, flat=tuple(flat), folds=folds,
            target_precision=target_precision, target_false_alarm=target_false_alarm, prior=prior, preset=preset,
            echo=lambda msg: click.echo(msg, err=True))
    except (FranqError, ValueError) as exc:
        raise fail(exc) from None
    click.echo("\n".join(printable(line) for line in format_fit_report(report, output, report_path).split("\n")),
               err=True)


@fit.command("prior")
@click.argument("calibrator_path", metavar="CALIBRATOR", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Adjusted calibrator JSON to write.")
@click.option("--prior", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True), default=None,
              help="The share of true claims where the calibrator will be used.")
@click.option("--from-labelled", "labelled", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Claims of the deployment labelled `is_true`: `franq score` output (what `franq fit calibrator` "
                   "reads) or unscored examples with labelled claims. Their share of true claims, with its interval.")
@click.option("--from-records", "records", type=click.Path(exists=True, dir_okay=False), default=None,
              help="`franq score` output of the deployment (no labels needed): estimate that share by EM "
                   "(Saerens, Latinne & Decaestecker 2002).")
def prior(calibrator_path, output, prior, labelled, records):
    """Move a calibrator to a new base rate, with a few labels or none.

    P(true) is moved on the logit scale by log(P'/(1-P')) - log(P/(1-P)), P the mean P(true)
    the calibrator gave its fit claims (its `implied_prior`), P' the deployment's share of
    true claims (--prior; the share of a few labelled claims, --from-labelled; or estimated from
    --from-records by EM, which assumes that only that share changed). A file without
    `implied_prior` (fitted before 2026-11-29; the shipped files all record it) moves each map's output
    (T_s, T_c, T_n; the UQ maps of a binary one) before mixing, P its fit claims' share true.
    Valid when only how often claims are true changes, not what a true or a false claim looks
    like (label shift). Measured: benchmarks/results/prior-shift.md. CALIBRATOR: a file, or a
    shipped calibrator by the name `franq score` prints (franq/data/calibrator-....json).
    """
    from franq.calibrate import calibrator_file
    from franq.fit.prior import adjust_prior, format_prior

    try:
        calibrator_path = str(calibrator_file(calibrator_path))
        check_outputs({"-o": output}, {"CALIBRATOR": calibrator_path, "--from-records": records,
                                       "--from-labelled": labelled})
        out = adjust_prior(calibrator_path, output, prior=prior, records=records, labelled=labelled)
    except (FranqError, ValueError) as exc:
        raise fail(exc) from None
    click.echo(format_prior(out, output), err=True)


@fit.command("probe")
@click.argument("input_path", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Probe file to write: .json, or .safetensors (arrays as tensors, the rest as header metadata).")
@click.option("--features", "features", default="lookback,hidden:16", show_default=True,
              help="Feature sets, one probe each: lookback (Lookback Lens ratios), hidden:LAYER (hidden states "
                   "of the with-passages pass; hidden:8+16 pools two layers), hidden_closed:LAYER (the "
                   "closed-book pass), hidden_diff:LAYER (their difference); a suffix @last pools only "
                   "the last token (semantic entropy probes).")
@click.option("--folds", type=Number(2, integer=True), default=5, show_default=True, help="Cross-validation folds (grouped by answer).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False),
              help="Fit report JSON. Default: OUTPUT with .report.json.")
@model_stack
def probe(input_path, output, features, folds, report_path, stack: StackFlags):
    """Fit probes on a model's internals from labelled claims.

    INPUT_PATH is JSONL of raw examples with labelled claims ({"question", "passages",
    "answer", "claims": [{"text", "is_faithful", "is_true"}]}), as `franq fit calibrator` reads;
    for a semantic entropy probe, short answers whose one claim is the answer itself with
    its samples' "semantic_entropy" (a number). Each answer gets the with-passages pass with
    capture (and the closed-book pass when a feature set reads it); one logistic probe is
    fitted per label present (is_faithful -> the lookback / probe faithfulness backends,
    is_true -> the truth_probe scorer, semantic_entropy -> low_semantic_entropy, the
    se_probe scorers) and feature set, its C chosen by cross-validation grouped by answer.
    The file records the model, the features and the input's SHA-256; JSON or safetensors,
    never pickle.
    """
    from franq.fit.probe import fit_probes_from_file, format_probe_report, parse_feature_specs, read_labelled

    try:
        check_outputs({"-o": output, "--report": report_path}, {"input": input_path, **stack_files(stack)})
        parse_feature_specs(features)  # bad flags fail before the model loads
        examples = read_labelled(input_path)
        fr = load_pipeline(stack.config(faithfulness="lexical", calibrator="none", mode="long"))  # only the passes run
        with click.progressbar(length=len(examples), label="passes", file=sys.stderr) as bar:
            report, report_path = fit_probes_from_file(fr, input_path, output, features=features, folds=folds,
                                                       report_path=report_path, progress=bar.update,
                                                       examples=examples)
    except (FranqError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(format_probe_report(report, output, report_path), err=True)


@fit.command("faithfulness")
@click.argument("train", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Folder to write faithfulness-combined.json (and faithfulness-context-pmi.json) into.")
@click.option("--scores", type=click.Path(exists=True, dir_okay=False),
              help="`franq score` output of TRAIN (embedded stack): its claims' pass log-probabilities give the "
                   "context-PMI features; fits faithfulness-context-pmi.json too.")
@click.option("--with-pmi", is_flag=True, help="Add the context-PMI features to the combined map (needs --scores).")
@click.option("--only-pmi", is_flag=True, help="Fit only the context-PMI map (needs --scores).")
@click.option("--data-label", help="What the maps record they were fitted on. Default: TRAIN's file name.")
def faithfulness(train, out_dir, scores, with_pmi, only_pmi, data_label):
    """Fit the logistic faithfulness maps from claims with support labels.

    TRAIN is JSONL of franq input records whose claims carry "is_faithful" (true, false or
    null: left out), e.g. datasets/expertqa/train.jsonl. The combined map (the `combined`
    backend) is a logistic regression over text features of (passages, claim); with
    --scores, the context-PMI map (the `context-pmi` backend) over the claims' mean token
    PMI. Point a config at the result with [faithfulness] map = "DIR/faithfulness-combined.json".
    The shipped maps are rebuilt by `franq fit shipped`.
    """
    from franq.fit.faithfulness_map import fit_faithfulness

    try:
        if os.path.isdir(out_dir):  # the maps it writes are not its inputs
            check_outputs({"-o": os.path.join(out_dir, name) for name in MAP_FILES}, {"TRAIN": train, "--scores": scores})
        lines = fit_faithfulness(train, out_dir, scores=scores, with_pmi=with_pmi, only_pmi=only_pmi,
                                 data_label=data_label)
    except (FranqError, ValueError, KeyError) as exc:
        raise fail(exc) from None
    click.echo("\n".join(lines), err=True)


@fit.command("shipped")
@click.argument("names", nargs=-1)
@click.option("--out", "out_dir", type=click.Path(file_okay=False),
              help="Folder to write the rebuilt files into. Default: a new temporary folder.")
@click.option("--in-place", is_flag=True, help="Write into franq/data/, replacing the shipped files.")
@click.option("--datasets", "datasets_dir", type=click.Path(exists=True, file_okay=False),
              help="The committed datasets/ folder of a franq checkout. Default: the one beside this package.")
@click.option("--raw", type=click.Path(exists=True, file_okay=False),
              help="Raw public data folder (the SOURCES.md files), for --retrain-verifier. Default: $FRANQ_RAW_DATA.")
@click.option("--check", is_flag=True, help="Compare each rebuilt file byte for byte with the shipped one and "
                                            "print a table (identical / differs, and why). The verifier is not "
                                            "retrained: its card is compared with its recipe (the table says which check ran).")
@click.option("--retrain-verifier", is_flag=True,
              help="Also retrain the verifier by its recipe (v1, then v7: about 80 minutes on one CPU thread); "
                   "with --check, compare its weights with the shipped ones.")
@click.option("--evaluate", is_flag=True, help="Also print the held-out results table of the files that have one "
                                               "(the short-form calibrator: benchmarks/results/short-calibrator.md).")
@click.option("--list", "list_only", is_flag=True, help="List the shipped files, what each is fitted on and "
                                                        "what its rebuild costs; rebuild nothing.")
@click.option("--check-inputs", "check_inputs", type=click.Path(exists=True, dir_okay=False),
              help="Rebuild nothing: recompute the fit inputs of the first records of each sampled file (the verifier "
                   "stack's calibrators, the combined-v1 long and short ones, the slot combiner; NAMES, or all) and "
                   "compare them with the samples recorded in this file (about two minutes; the test suite runs it on "
                   "tests/fixtures/shipped-inputs.json).")
@click.option("--record-inputs", "record_inputs", type=click.Path(dir_okay=False),
              help="Rebuild nothing: record those samples, with each shipped file's sha256, into this file (after "
                   "--in-place, once the shipped files are what their recipes rebuild).")
def shipped(names, out_dir, in_place, datasets_dir, raw, check, retrain_verifier, evaluate, list_only, check_inputs,
            record_inputs):
    """Rebuild the files shipped in franq/data/ from the committed datasets.

    NAMES are file names in franq/data/ (all fitted files when none). The maps and the
    long and short calibrators rebuild in seconds from datasets/ and the committed
    generations (datasets/generations), without the model. The observer calibrator
    teacher-forces its answers with the embedded model (about 2 minutes on CPU); its
    distractor pairs come from datasets/nq-open/passage-answers.json.gz. The probe-preset calibrator and the
    probe file need the embedded model's passes with captured internals: about 25-45
    minutes on one CPU thread for the probe calibrator, 13 more for the probe file's
    faithfulness probes (-v logs the progress). The verifier (franq/data/verifier) is
    retrained by its recipe only with --retrain-verifier (as `franq fit verifier` does);
    --check alone compares its card with the recipe. example.json is data, not fitted, and
    is not rebuilt. Results: benchmarks/results/shipped-artefacts.md.
    """
    import tempfile
    from pathlib import Path

    from franq.fit import shipped as table

    if list_only:
        click.echo(table.describe())
        return
    if check_inputs or record_inputs:
        _inputs_sample(names, check_inputs, record_inputs, datasets_dir)
        return
    if in_place and out_dir:
        raise click.UsageError("--in-place writes into franq/data/: leave out --out")
    if in_place and check:
        raise click.UsageError("--check compares with the shipped files: it cannot be used with --in-place")
    out = table.data_dir() if in_place else Path(out_dir or tempfile.mkdtemp(prefix="franq-shipped-"))
    try:
        rows = table.rebuild(names, out=out, datasets=datasets_dir, raw=raw, check=check, evaluate=evaluate, retrain=retrain_verifier,
                             echo=lambda msg: click.echo(msg, err=True))
    except (FranqError, ValueError, FileNotFoundError) as exc:
        raise fail(exc) from None
    click.echo(f"wrote {sum(r['bytes'] is not None for r in rows)} file(s) into {out}", err=True)
    sampled = [r["name"] for r in rows if r["bytes"] is not None and table.lookup([r["name"]])[0].inputs is not None]
    if in_place and sampled:  # the drift check's record (franq/fit/shipped_inputs.py) must follow the new files
        click.echo(f"record their inputs sample again: franq fit shipped {' '.join(sampled)} --record-inputs "
                   "tests/fixtures/shipped-inputs.json", err=True)
    click.echo(table.format_table(rows))
    for r in rows:
        if "evaluation" in r:
            click.echo(f"\n{r['name']}:\n\n{r['evaluation']}")


def _inputs_sample(names, check_path, record_path, datasets_dir) -> None:
    """``--check-inputs`` / ``--record-inputs`` of ``franq fit shipped`` (franq/fit/shipped_inputs.py)."""
    from pathlib import Path

    from franq.fit import shipped_inputs

    if check_path and record_path:
        raise click.UsageError("--check-inputs and --record-inputs: give one")
    datasets = Path(datasets_dir) if datasets_dir else None
    try:
        if record_path:
            data = shipped_inputs.record(record_path, names, datasets=datasets)
            click.echo(f"recorded the fit inputs of {len(data['files'])} file(s) into {record_path}", err=True)
            return
        problems = shipped_inputs.check(check_path, names, datasets=datasets)
    except (FranqError, ValueError, FileNotFoundError) as exc:
        raise fail(exc) from None
    if problems:
        for line in problems:
            click.echo(printable(line), err=True)
        raise click.ClickException(f"{len(problems)} problem(s) with the sampled files' inputs (above)")
    click.echo(f"every sampled file reads the inputs it was fitted on ({check_path})", err=True)


@fit.command("verifier")
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Directory to write: model.safetensors, config.json, tokenizer files, card.json, CARD.md.")
@click.option("--raw", type=click.Path(exists=True, file_okay=False),
              help="The raw data directory (shared/data/raw). Default: $FRANQ_RAW_DATA.")
@click.option("--datasets", "datasets_dir", type=click.Path(exists=True, file_okay=False), default="datasets",
              show_default=True, help="franq's datasets/ (the manifests and the ExpertQA, WiCE and nq-open splits).")
@click.option("--recipe", "recipe_name", help="Which verifier's recipe (franq/fit/verifier/recipe.py), e.g. v1, "
                                                 "the shipped verifier's base. Default: the shipped verifier's.")
@click.option("--base", type=click.Path(exists=True, file_okay=False),
              help="The recipe's base verifier folder (v7: v1). Default: OUT-base, filled from git as committed "
                   "(v1's weights at 10e1ccf) or, without git, trained by its recipe (reused when it is there).")
@click.option("--retrain-base", is_flag=True, help="Train the base by its own recipe even where git holds it.")
@click.option("--device", default="cpu", show_default=True,
              help="Where to train (cpu, cuda): the same recipe, in minutes on a GPU.")
@click.option("--write-pairs", type=click.Path(dir_okay=False),
              help="Only build the recipe's training and dev pairs into this file (gzip JSON; xz for a .xz name) and stop.")
@click.option("--pairs", "pairs_file", type=click.Path(exists=True, dir_okay=False),
              help="Train from pairs written by --write-pairs for the same manifest (e.g. built here, trained on a GPU).")
@click.option("--checkpoint-every", default=200, show_default=True, type=click.IntRange(min=0),
              help="Steps between checkpoints (OUT/checkpoint.pt); run the same command again to resume. 0: none.")
@click.option("--keep-checkpoints", type=click.Path(file_okay=False),
              help="Also keep a copy of every checkpoint in this folder (step-NNNNN.pt), to compare them on dev sets.")
@click.option("--stop", type=click.IntRange(min=0), default=None,
              help="End after this step of the recipe's plan (0: run the whole plan). Default: the recipe's own "
                   "stop, if any. With a kept step-N.pt copied to OUT/checkpoint.pt, goes on past a recipe's stop.")
@THREADS_OPTION
def verifier(out_dir, raw, datasets_dir, recipe_name, base, retrain_base, device, write_pairs, pairs_file,
             checkpoint_every, keep_checkpoints, stop, threads):
    """Rebuild franq's three-way verifier (supported / contradicted / not mentioned) by its recipe.

    With no options but -o this trains the shipped verifier (franq/data/verifier) as it was
    trained: v7 from v1 on datasets/verifier/manifest-v7.json, lr 2e-5, seed 0, one epoch,
    batch 32. v1 (all-MiniLM-L6-v2 fine-tuned on datasets/verifier/manifest.json, lr 4e-5)
    is taken from git as committed, or trained by its recipe (--retrain-base, or without
    git; today's code builds 6,822 synthetic pairs for it where v1 had 6,737, so the result
    then differs from the shipped weights). Each training builds its pairs from the
    manifest's sources (SNLI, synthetic claims from nq-open / ExpertQA / WiCE passages,
    ExpertQA and WiCE human labels) and writes fp16 safetensors with a card (data hashes and
    licences, recipe, dev metrics, time): about 40 minutes on one CPU thread. `franq fit
    shipped --check` compares the shipped card with the recipe.
    """
    from pathlib import Path

    from franq.evaluation.common import raw_data_dir
    from franq.fit.verifier.recipe import RECIPES, SHIPPED, fit_recipe

    if recipe_name is not None and recipe_name not in RECIPES:
        raise click.BadParameter(f"{recipe_name!r}; known: {', '.join(RECIPES)}", param_hint="--recipe")
    recipe = RECIPES[recipe_name] if recipe_name else SHIPPED
    if stop is not None:  # not the recipe's rebuild any more: its card says which step it ended at
        import dataclasses

        recipe = dataclasses.replace(recipe, stop=stop or None)
    if write_pairs:
        from franq.fit.verifier.data import sha256
        from franq.fit.verifier.train import build_pairs, provenance, write_pairs as write

        manifest = Path(datasets_dir) / recipe.manifest
        spec = json.loads(manifest.read_text("utf-8"))
        data = build_pairs(raw_data_dir(raw), Path(datasets_dir), spec, seed=recipe.seed)
        write(Path(write_pairs), data, sha256(manifest), provenance(raw_data_dir(raw), Path(datasets_dir), spec))
        click.echo(f"wrote {write_pairs}: " + ", ".join(f"{k} {sum(map(len, v.values()))}" for k, v in data.items()))
        return
    try:
        card = fit_recipe(recipe, raw=raw_data_dir(raw), datasets=Path(datasets_dir), out=Path(out_dir),
                          base=Path(base) if base else None, retrain_base=retrain_base, threads=threads,
                          device=device, pairs_file=Path(pairs_file) if pairs_file else None,
                          checkpoint_every=checkpoint_every,
                          keep=Path(keep_checkpoints) if keep_checkpoints else None)
    except FranqError as exc:
        raise fail(exc) from None
    click.echo((Path(out_dir) / "CARD.md").read_text(encoding="utf-8"))
    click.echo(f"wrote {out_dir} ({card['training']['total_seconds']} s)")
