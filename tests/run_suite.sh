#!/usr/bin/env bash
# The whole test suite, as `make test` runs it: two pytest processes at once. The tests marked `waits` are long and
# leave the CPU idle much of the time (they sit through outages, worker timeouts and server restarts), so they run in
# a second lane beside the rest instead of after it; docs/dev/performance.md#ci-lanes has the figures behind the choice.
# Usage: tests/run_suite.sh PYTEST [pytest arguments...]. The second lane's report follows the first's; the exit
# status is the first lane's if it failed, else the second's (pytest's 5, "no test selected", counts as passing).
set -u
pytest_bin=$1
shift
log=$(mktemp "${TMPDIR:-/tmp}/tcobench-waits.XXXXXX")
"$pytest_bin" -m waits "$@" >"$log" 2>&1 &
side=$!
trap 'kill "$side" 2>/dev/null; rm -f "$log"' EXIT
"$pytest_bin" -m "not waits" "$@"
main=$?
[ "$main" -eq 5 ] && main=0
wait "$side"
waits=$?
[ "$waits" -eq 5 ] && waits=0
echo
echo "=============== the tests marked waits (second lane, run beside the rest) ==============="
cat "$log"
[ "$main" -ne 0 ] && exit "$main"
exit "$waits"
