#!/usr/bin/env bash
# The whole test suite, as `make test` runs it: two pytest processes at once, then a third alone. The tests marked
# `waits` are long and leave the CPU idle much of the time (they sit through outages, worker timeouts and server
# restarts), so they run in a second lane beside the rest instead of after it; docs/dev/performance.md#ci-lanes has
# the figures behind the choice. The tests marked `hog` load the machine on purpose (a signal's exit under a CPU hog
# they start): they run alone, after both lanes, so that their hog slows no other test and no other test adds to
# their load.
# Usage: tests/run_suite.sh PYTEST [pytest arguments...]. The second lane's report follows the first's, then the hog
# tests'; the exit status is the first failing of the three in that order (pytest's 5, "no test selected", counts as
# passing).
set -u
pytest_bin=$1
shift
log=$(mktemp "${TMPDIR:-/tmp}/tcobench-waits.XXXXXX")
"$pytest_bin" -m "waits and not hog" "$@" >"$log" 2>&1 &
side=$!
trap 'kill "$side" 2>/dev/null; rm -f "$log"' EXIT
"$pytest_bin" -m "not waits and not hog" "$@"
main=$?
[ "$main" -eq 5 ] && main=0
wait "$side"
waits=$?
[ "$waits" -eq 5 ] && waits=0
echo
echo "=============== the tests marked waits (second lane, run beside the rest) ==============="
cat "$log"
echo
echo "=============== the tests marked hog (alone, after both lanes) ==============="
"$pytest_bin" -m hog "$@"
hog=$?
[ "$hog" -eq 5 ] && hog=0
[ "$main" -ne 0 ] && exit "$main"
[ "$waits" -ne 0 ] && exit "$waits"
exit "$hog"
