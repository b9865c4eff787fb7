#!/bin/sh
# `make test`'s run: the fast suite (-m "not slow") and the slow end-to-end tests (-m slow)
# side by side, two processes of one torch thread each (the two cores of a small machine);
# the fast suite prints as it goes, the slow suite's report follows it. Fails when either does.
# $1: the venv's bin folder (default .venv/bin).
BIN=${1:-.venv/bin}
log=$(mktemp "${TMPDIR:-/tmp}/franq-slow-tests.XXXXXX") || exit 1
# no cache plugin here: the fast suite alone keeps .pytest_cache (its last-failed list)
"$BIN/python" -m pytest -q -p no:cacheprovider -m slow >"$log" 2>&1 &
slow=$!
trap 'kill $slow 2>/dev/null; rm -f "$log"; exit 130' INT TERM
echo "running the slow end-to-end tests (-m slow) beside these; their report follows"
"$BIN/python" -m pytest -q -m "not slow"
fast=$?
wait $slow
rc=$?
echo "--- the slow end-to-end tests (-m slow), run beside the others:"
cat "$log"
rm -f "$log"
[ "$fast" -eq 0 ] && [ "$rc" -eq 0 ]
