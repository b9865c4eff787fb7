#!/usr/bin/env bash
# The trust suite (paper 004) on nq-open with the embedded SmolLM2, as reported in docs/trust.md.
# Resumable: every answer is cached (benchmarks/cache/trust-nq*/answers.jsonl); rerun to continue.
# Two lanes side by side, one thread each, sized for a 2-core machine (about 70 minutes):
#   lane 1: the factuality conditions (p0-d0, p30-d0), all four strategies, FRANQ on every
#           answer; then p0-d20 with Hedge;
#   lane 2: p0-d8 with all four strategies; then p0-d20 with Baseline.
# The distractor conditions are answered without FRANQ scoring (it would double their cost:
# two more passes over 8-20 passages per answer). Then benchmarks/trust_nq_report.sh.
set -euo pipefail
N=${N:-100}
PY=${PY:-python}
OUT=benchmarks/cache/trust-nq
export OMP_NUM_THREADS=1
$PY -m franq trust build datasets/nq-open/test.jsonl --pool datasets/nq-open/passages.jsonl.gz \
    --out $OUT/conditions.jsonl --limit 120 --max-passage-words 60 --seed 0
C=$OUT/conditions.jsonl
( $PY -m franq trust run $C --out $OUT --limit "$N" --conditions p0-d0,p30-d0
  $PY -m franq trust run $C --out $OUT-d20-hedge --limit "$N" --conditions p0-d20 --strategies hedge --no-franq ) &
( $PY -m franq trust run $C --out $OUT-d8 --limit "$N" --conditions p0-d8 --no-franq
  $PY -m franq trust run $C --out $OUT-d20-baseline --limit "$N" --conditions p0-d20 --strategies baseline --no-franq ) &
wait
