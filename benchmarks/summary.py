"""The one-screen summary at the top of docs/BENCHMARKS.md: the shipped default stack's
numbers, read from the committed results files (no model runs).

    python benchmarks/summary.py           # rewrite the block between the markers
    python benchmarks/summary.py --check   # exit 1 when the block differs from what this writes

Each line names the set it was measured on and links its results file; the numbers are
copied from those files' tables as they were written (a results file changes only when its
benchmark is rerun). Every number is of the default stack: each results file must name the
verifier stack the shipped long-form calibrator was fitted for (``fitted_for.faithfulness``,
e.g. ``verifier:<model>:relevant:slots``), and the summary reads the tables after its last
mention; a file measured on another stack stops the summary with the benchmark to rerun.
tests/test_benchmark_summary.py checks the block is in sync.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DOC = ROOT / "docs" / "BENCHMARKS.md"
BEGIN = "<!-- benchmarks/summary.py: begin -->"
END = "<!-- benchmarks/summary.py: end -->"
FAITHFULNESS_SETS = ("synthetic-nq", "synthetic-expertqa", "nq-qa", "nq-declarative", "snli", "expertqa", "wice")
"""The dev sets of faithfulness-sets.md's mean (expertqa+cites is left out: its markers are a cue)."""


def tables(text: str) -> list[list[dict[str, str]]]:
    """Every Markdown table in ``text``, in order, as rows keyed by the header's cells."""
    found, lines = [], text.splitlines()
    i = 0
    while i < len(lines) - 1:
        if lines[i].startswith("|") and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[i + 1].strip()):
            header = _cells(lines[i])
            j, rows = i + 2, []
            while j < len(lines) and lines[j].startswith("|"):
                rows.append(dict(zip(header, _cells(lines[j]))))
                j += 1
            found.append(rows)
            i = j
        else:
            i += 1
    return found


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def default_stack() -> str:
    """The verifier stack the shipped long-form calibrator was fitted for: the default's."""
    path = ROOT / "franq" / "data" / "calibrator-long-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json"
    return json.loads(path.read_text(encoding="utf-8"))["fitted_for"]["faithfulness"]


def measured_on(path: Path, stack: str) -> str:
    """``path``'s text after its last line naming ``stack`` (whole stack names only: a
    ``...:relevant`` line does not count for ``...:relevant:slots``)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    mentions = [i for i, line in enumerate(lines) if re.search(re.escape(stack) + r"(?![\w:])", line)]
    if not mentions:
        raise ValueError(f"{path.relative_to(ROOT)} was not measured on the default stack {stack}: "
                         "rerun its benchmark (the command is in the file)")
    return "\n".join(lines[mentions[-1]:])


def table_with(path: Path, column: str, stack: str | None = None) -> list[dict[str, str]]:
    """The first table of ``path`` that has ``column`` (with ``stack``: after the file's last
    mention of it, see :func:`measured_on`)."""
    text = measured_on(path, stack) if stack else path.read_text(encoding="utf-8")
    for rows in tables(text):
        if rows and column in rows[0]:
            return rows
    raise ValueError(f"{path.relative_to(ROOT)}: no table with a column {column!r}"
                     + (f" after its last mention of {stack}" if stack else ""))


def short(value: str) -> str:
    """0.802 -> .802, -0.008 -> -.008 (the docs' style)."""
    return re.sub(r"(?<![\d.])0\.(\d)", r".\1", value)


def link(name: str) -> str:
    return f"[{name}](../benchmarks/results/{name})"


def search(pattern: str, path: Path, stack: str | None = None) -> str:
    match = re.search(pattern, measured_on(path, stack) if stack else path.read_text(encoding="utf-8"), re.MULTILINE)
    if not match:
        raise ValueError(f"{path.relative_to(ROOT)}: nothing matches {pattern!r}")
    return match.group(1)


def faithfulness(stack: str) -> list[str]:
    path = RESULTS / "faithfulness-sets.md"
    rows, run = table_with(path, "dev set", stack), search(r"^Run (\S+)", path)
    cell = {(r["backend"], r["dev set"]): (r["pairs"], f"{short(r['BAcc @0.5'])} / {short(r['AUROC'])}") for r in rows}
    means = {r["backend"]: f"{short(r['mean BAcc'])} / {short(r['mean AUROC'])}"
             for r in table_with(path, "mean BAcc", stack)}
    out = [f"**Faithfulness**: is a claim supported by its passages? BAcc of P_supported at 0.5 / AUROC, on dev "
           f"sets no backend was fitted on ({link('faithfulness-sets.md')}, {run}):", "",
           "| set | pairs | verifier (default) | lexical | combined-v1 |", "|---|---:|---|---|---|"]
    for name in FAITHFULNESS_SETS:
        pairs = cell[("verifier", name)][0]
        out.append(f"| {name} | {pairs} | " + " | ".join(cell[(b, name)][1] for b in ("verifier", "lexical", "combined"))
                   + " |")
    out.append(f"| mean of {len(FAITHFULNESS_SETS)} | | " + " | ".join(means[b] for b in ("verifier", "lexical", "combined"))
               + " |")
    return out


def calibration(stack: str) -> list[str]:
    long_path, short_path = RESULTS / "three-condition-long.md", RESULTS / "short-calibrator-verifier.md"
    long_rows = table_with(long_path, "raw 3-cond. mix", stack)
    short_rows = table_with(short_path, "AUROC raw 3-cond.", stack)
    out = ["", "**Calibration**: AUROC of P(true) for the truth labels, the shipped calibrator against the raw "
           "three-condition mix, 95% bootstrap interval by answer:", "",
           "| form | held-out set | claims / answers (false) | calibrated | raw mix | difference | source |",
           "|---|---|---:|---:|---:|---|---|"]
    long_sets = ("ExpertQA rand_test, 205 answers no fit has seen", "the same + 199 copies with one fact contradicted")
    for label, row in zip(long_sets, long_rows):
        out.append(f"| long | {label} | {row['n (false)']} | {short(row['calibrated'])} | {short(row['raw 3-cond. mix'])} | "
                   f"{short(row['calibrated - raw 3-cond. (95% CI, by answer)'])} | {link('three-condition-long.md')} |")
    for row in short_rows:
        out.append(f"| short | nq-open test, first 500 questions, {row['passages']} passage lists | "
                   f"{row['answers']} ({row['wrong']}) | {short(row['AUROC calibrated'])} | "
                   f"{short(row['AUROC raw 3-cond.'])} | {short(row['calibrated - raw (95% CI)'])} | "
                   f"{link('short-calibrator-verifier.md')} |")
    return out


def verdicts(stack: str) -> list[str]:
    path = RESULTS / "verdicts.md"
    right, true, false = (search(pattern, path, stack) for pattern in (
        r"All: (\d+ of \d+) verdicts right", r"true claims: (\d+ of \d+)", r"false claims: (\d+ of \d+)"))
    return ["", f"**Verdicts** on obvious cases (the bundled example and hand-written claims whose passage plainly "
            f"supports or contradicts them): {right} right "
            f"(true claims {true}, false claims "
            f"{false} on the right side of 0.5; {link('verdicts.md')})."]


def speed(stack: str) -> list[str]:
    path = RESULTS / "verifier-cost.md"
    rows = {r["stack"]: r for r in table_with(path, "s per answer (median)", stack)}
    answers, memory = (search(r"^(\d+ ExpertQA answers \(\d+ claims\))", path),
                       search(r"peak RSS [^:]*: (\d+ MB)", path))
    run = search(r"^Run (\S+)", path)
    return ["", f"**Speed** (long form, {answers}, one torch "
            f"thread on a shared 2-core CPU): {rows['verifier']['s per answer (median)']} s per answer (median) with "
            f"the verifier, {rows['combined']['s per answer (median)']} s with combined-v1; peak memory "
            f"{memory} with both stacks loaded ({link('verifier-cost.md')}, {run})."]


def stack(verifier: str) -> list[str]:
    calibrators = sorted(p.name for p in (ROOT / "franq" / "data").glob("calibrator-*-verifier.json"))
    return ["## Summary: the shipped default stack", "",
            "_Generated by `python benchmarks/summary.py` from the committed results files; edit the script, "
            "not this block._", "",
            f"The default stack: the embedded SmolLM2-135M-Instruct (Q4_1, de-quantized to float32, CPU), "
            f"faithfulness `{verifier}` (model : window aggregation"
            + (" : the typed-slot check" if verifier.endswith(":slots") else "") + "), calibrators "
            + ", ".join(f"`{c}`" for c in calibrators) + ".", ""]


def render() -> str:
    verifier = default_stack()
    return "\n".join([BEGIN, *stack(verifier), *faithfulness(verifier), *calibration(verifier), *verdicts(verifier),
                      *speed(verifier), END])


def rewrite(text: str, block: str) -> str:
    """``text`` with the block between the markers replaced (the markers must both be there)."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"docs/BENCHMARKS.md needs the markers {BEGIN!r} and {END!r}, in that order")
    return text[:start] + block + text[end + len(END):]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when docs/BENCHMARKS.md's block is out of date")
    args = ap.parse_args(argv)
    text = DOC.read_text(encoding="utf-8")
    new = rewrite(text, render())
    if args.check:
        if new != text:
            print("docs/BENCHMARKS.md's summary is out of date: run python benchmarks/summary.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
