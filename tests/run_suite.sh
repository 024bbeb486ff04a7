#!/usr/bin/env bash
# The whole test suite, as `make test` runs it: three pytest processes at once (the lanes), then two more, alone, one
# after the other; docs/dev/performance.md#ci-lanes has the figures behind the choice.
#   - integration: tests/integration and tests/faults (marker `integration`, set from the path by tests/conftest.py,
#     but for its BESIDE_UNIT files), in the foreground: its report streams. Its tests start engines, containers,
#     servers and tcobench processes;
#   - rest: tests/unit, and tests/conftest.py's BESIDE_UNIT. One pytest process for the whole suite held CI's
#     critical path while the second core idled: split in two, both cores are busy to the end;
#   - waits: the tests marked `waits`, long and leaving the CPU idle much of the time (they sit through outages,
#     worker timeouts and server restarts);
#   - then quiet: the tests marked `quiet` time the machine to 1 ms and skip when it is loaded, so they run alone,
#     once the lanes' 1-minute load average has fallen below one per core (at most 2 minutes' wait);
#   - then hog: the tests marked `hog` load the machine on purpose (a signal's exit under a CPU hog they start), so
#     they run alone and last: their hog slows no other test, and no other test adds to their load.
# Every test is in exactly one of the five: tests/unit/test_run_suite.py checks their marker expressions below.
# With LINT set (`make test` sets it to `make lint`: mypy, mkdocs, ruff, sqlfluff), that command runs beside the
# three lanes: it needs one core, and it held CI's critical path when it ran before them
# (docs/dev/performance.md#ci-lanes).
# Usage: [LINT=COMMAND] tests/run_suite.sh PYTEST [pytest arguments...]. The reports follow each other in the order
# above, each closed by pytest's own wall time, and the lint's after the lanes'; the exit status is the first failing
# of the five in that order, then the lint's (pytest's 5, "no test selected", counts as passing).
set -u
# One DuckDB thread per instance: two lanes on two cores, each with DuckDB's default of a thread per core, spent
# more CPU on the same tests (the figures: docs/dev/performance.md#ci-lanes).
export TCOBENCH_DUCKDB_THREADS="${TCOBENCH_DUCKDB_THREADS:-1}"
pytest_bin=$1
shift
INTEGRATION="integration and not waits and not quiet and not hog"
REST="not integration and not waits and not quiet and not hog"
WAITS="waits and not quiet and not hog"
QUIET="quiet and not hog"
HOG="hog"

logs=$(mktemp -d "${TMPDIR:-/tmp}/tcobench-lanes.XXXXXX")
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$logs"' EXIT

passed() {  # a pytest exit status, 5 ("no test selected") read as 0
  [ "$1" -eq 5 ] && echo 0 || echo "$1"
}

# `( exec ... ) &`, not `... &`: a script's plain background command ignores SIGINT, and so would the tcobench, engine
# and server processes a test starts from it (a test's Ctrl-C to them would go unheard).
( exec "$pytest_bin" -m "$REST" "$@" >"$logs/rest" 2>&1 ) &
rest_pid=$!
pids+=("$rest_pid")
lint_pid=
if [ -n "${LINT:-}" ]; then
  ( exec bash -c "$LINT" >"$logs/lint" 2>&1 ) &
  lint_pid=$!
  pids+=("$lint_pid")
fi
( exec "$pytest_bin" -m "$WAITS" "$@" >"$logs/waits" 2>&1 ) &
waits_pid=$!
pids+=("$waits_pid")
"$pytest_bin" -m "$INTEGRATION" "$@"
integration=$(passed $?)
wait "$rest_pid"
rest=$(passed $?)
wait "$waits_pid"
waits=$(passed $?)
echo
echo "=============== tests/unit (lane rest, beside tests/integration and tests/faults) ==============="
cat "$logs/rest"
echo
echo "=============== the tests marked waits (lane waits, beside the others) ==============="
cat "$logs/waits"

lint=0
if [ -n "$lint_pid" ]; then
  wait "$lint_pid"
  lint=$?
  echo
  echo "=============== the lint: $LINT (beside the lanes), exit $lint ==============="
  cat "$logs/lint"
fi

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

for status in "$integration" "$rest" "$waits" "$quiet" "$hog" "$lint"; do
  [ "$status" -ne 0 ] && exit "$status"
done
exit 0
