#!/usr/bin/env bash
# The report of benchmarks/trust_nq.sh: every lane's answers in one run directory, then the tables.
set -euo pipefail
PY=${PY:-python}
OUT=benchmarks/cache/trust-nq
mkdir -p $OUT-all
cat $OUT/answers.jsonl $OUT-d8/answers.jsonl $OUT-d20-hedge/answers.jsonl $OUT-d20-baseline/answers.jsonl \
    > $OUT-all/answers.jsonl
$PY -m franq trust report $OUT-all --out benchmarks/results/trust-nq
