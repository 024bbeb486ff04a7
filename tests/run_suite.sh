#!/usr/bin/env bash
# The whole test suite, as `make test` runs it: three pytest processes at once (the lanes), then two more, alone, one
# after the other; docs/dev/performance.md#ci-lanes has the figures behind the choice.
#   - unit: tests/unit (in the foreground: its report streams);
#   - servers: tests/integration and tests/faults (marker `servers`, set from the path by tests/conftest.py): the
#     tests that start servers, engines, containers and tcobench processes. With tests/unit in one process beside
#     them, the two cores are both busy until the end instead of one pytest process holding the critical path;
#   - waits: the tests marked `waits`, long and leaving the CPU idle much of the time (they sit through outages,
#     worker timeouts and server restarts);
#   - then quiet: the tests marked `quiet` time the machine to 1 ms and skip when it is loaded, so they run alone,
#     once the lanes' load average has fallen below one per core (at most 2 minutes' wait);
#   - then hog: the tests marked `hog` load the machine on purpose (a signal's exit under a CPU hog they start), so
#     they run alone and last: their hog slows no other test, and no other test adds to their load.
# Every test is in exactly one of the five: their marker expressions below are checked by tests/unit/test_run_suite.py.
# Usage: tests/run_suite.sh PYTEST [pytest arguments...]. The reports follow each other in the order above; the exit
# status is the first failing of the five in that order (pytest's 5, "no test selected", counts as passing).
set -u
pytest_bin=$1
shift
UNIT="not servers and not waits and not quiet and not hog"
SERVERS="servers and not waits and not quiet and not hog"
WAITS="waits and not quiet and not hog"
QUIET="quiet and not hog"
HOG="hog"

logs=$(mktemp -d "${TMPDIR:-/tmp}/tcobench-lanes.XXXXXX")
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$logs"' EXIT

passed() {  # the status of a pytest run, 5 ("no test selected") read as 0
  [ "$1" -eq 5 ] && echo 0 || echo "$1"
}

"$pytest_bin" -m "$SERVERS" "$@" >"$logs/servers" 2>&1 &
pids+=($!)
"$pytest_bin" -m "$WAITS" "$@" >"$logs/waits" 2>&1 &
pids+=($!)
"$pytest_bin" -m "$UNIT" "$@"
unit=$(passed $?)
wait "${pids[0]}"
servers=$(passed $?)
wait "${pids[1]}"
waits=$(passed $?)
echo
echo "=============== the tests under tests/integration and tests/faults (lane servers, beside tests/unit) ==============="
cat "$logs/servers"
echo
echo "=============== the tests marked waits (lane waits, beside the others) ==============="
cat "$logs/waits"

echo
echo "=============== the tests marked quiet (alone, after the lanes) ==============="
cores=$(nproc)
for _ in $(seq 1 24); do
  awk -v cores="$cores" '{ exit !($1 < cores) }' /proc/loadavg && break
  sleep 5
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) on $cores cores"
"$pytest_bin" -m "$QUIET" "$@"
quiet=$(passed $?)

echo
echo "=============== the tests marked hog (alone, last) ==============="
"$pytest_bin" -m "$HOG" "$@"
hog=$(passed $?)

for status in "$unit" "$servers" "$waits" "$quiet" "$hog"; do
  [ "$status" -ne 0 ] && exit "$status"
done
exit 0
