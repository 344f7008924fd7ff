#!/usr/bin/env bash
# testtimes.sh LOG SECONDS: the end of a `go test -v` run's log: each
# top-level test's time, slowest first, and the suite's wall time.
set -euo pipefail
log="$1" wall="$2"
echo "== times of $(grep -cE '^--- (PASS|FAIL|SKIP)' "$log") tests (slowest first); wall time ${wall} s"
grep -E '^--- (PASS|FAIL|SKIP)' "$log" | sed -E 's/^--- (PASS|FAIL|SKIP): ([^ ]+) \(([0-9.]+)s\)$/\3 \1 \2/' | sort -rn | awk '{printf "   %8.1f s  %-4s %s\n", $1, $2, $3}'
