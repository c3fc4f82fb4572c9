#!/usr/bin/env bash
# Instructions per operation of Go benchmarks, counted by valgrind's
# cachegrind: deterministic where time on a shared machine is not.
#
#   scripts/instructions.sh PACKAGE-DIR BENCH-REGEX...
#   scripts/instructions.sh powertools/idempotency '^BenchmarkMiddleware$/^bare$'
#
# Each benchmark runs twice, at N1 and N2 iterations (2,000 and 6,000 unless
# set in the environment), with -test.cpu 1 and GOGC=off so that neither idle
# processors nor the collector's timing add noise; the difference in
# instructions divided by N2-N1 is printed. Needs valgrind (Debian: apt
# install valgrind); the tests' own files are read from PACKAGE-DIR.
set -euo pipefail
dir=$1
shift
n1=${N1:-2000}
n2=${N2:-6000}
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is not installed" >&2; exit 1; }
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
(cd "$dir" && go test -c -o "$bin" .)
count() {
	(cd "$dir" && GOGC=off valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
		"$bin" -test.run '^$' -test.bench "$1" -test.benchtime "$2x" -test.cpu 1 2>&1 >/dev/null) |
		awk '/I[ ]+refs:/ { gsub(",", "", $NF); print $NF }'
}
for bench in "$@"; do
	a=$(count "$bench" "$n1")
	b=$(count "$bench" "$n2")
	echo "$bench $(((b - a) / (n2 - n1))) instructions/op"
done
