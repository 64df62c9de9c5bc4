#!/bin/sh
# hostile-mutate.sh runs TestMutatedInputs (cmd/ptoasm/mutate_test.go): the
# structured damage of every PTOAS MLIR file of corpus/ and every shipped
# .pto program (truncation at each sixteenth, a deleted, duplicated or
# swapped line, one number made 0, -1, 2^31, 2^63, NaN or 1e309, an SSA
# value renamed, an unbalanced brace, a byte-order mark, CRLF), of the
# default profile, a suppressions file, a sweep shard and a step script,
# and an empty file, a directory and /dev/zero as "-". Each run is a
# process of its own under prlimit --as=4GiB and a 90 s timeout; the test
# fails on an exit other than 0, 1 or 2, a Go panic or runtime error, an
# exit 2 without a clear first line, a timeout, or fmt -w changing a file
# it failed on. It prints a tally of exit statuses per command.
#
#   scripts/hostile-mutate.sh [EVERY [JOBS [FILTER]]]
#
# asm, fmt and fmt -w run on every damage (in the test's process); lint,
# run and trace on every EVERY-th (default 15; "all" for every one, some
# hours on two CPUs). JOBS processes at once (default 2). FILTER, a Go
# regexp, picks the files (default all). Session 21: EVERY=15 took about an
# hour on a loaded 2-CPU host.
set -eu
every=${1:-15}
jobs=${2:-2}
filter=${3:-}
cd "$(dirname "$0")/.."
command -v prlimit >/dev/null || { echo "$0: needs prlimit (util-linux)" >&2; exit 2; }
[ -d corpus ] || echo "$0: no corpus/ (scripts/corpus-setup.sh): the shipped programs only" >&2
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/ptoasm" ./cmd/ptoasm
go test -c -o "$bin/ptoasm.test" ./cmd/ptoasm
cd cmd/ptoasm
PTOASM_MUTATE=$every PTOASM_MUTATE_JOBS=$jobs PTOASM_MUTATE_BIN="$bin/ptoasm" PTOASM_MUTATE_FILTER="$filter" \
	"$bin/ptoasm.test" -test.run '^TestMutatedInputs$' -test.v -test.timeout 6h
