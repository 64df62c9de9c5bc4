#!/bin/sh
# lint-compare.sh checks that two ptoasm binaries lint every shipped program
# identically: `lint --format json` output, standard error and exit status,
# byte for byte, for every .pto file under programs/ (hazards/ included) at
# its default size and, where the program declares RANKS, at each rank count
# given (default 2 3 5 8 17: 17 switches allreduce_ring to the neighbour
# barrier). Use it before merging a change to the detector's data
# structures, which must not change a verdict:
#
#   go build -o /tmp/old ./cmd/ptoasm   # on the old commit
#   go build -o /tmp/new ./cmd/ptoasm   # on the new one
#   scripts/lint-compare.sh /tmp/old /tmp/new [RANKS...]
#
# It prints one line per difference and exits 1 if there was any. With
# LINT_COMPARE_KEEP=DIR set, each difference's outputs of both binaries
# (out, err, rc) are kept as DIR/N-old.* and DIR/N-new.*, N the difference's
# number, so a difference seen once can be read afterwards (session 17 saw
# 57 differences while `go test ./...` ran beside the script that a rerun
# did not show, and had nothing left to read).
set -u
if [ $# -lt 2 ]; then
	echo "usage: $0 OLD-PTOASM NEW-PTOASM [RANKS...]" >&2
	exit 2
fi
old=$1
new=$2
shift 2
ranks=${*:-2 3 5 8 17}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs=0
diffs=0
one() { # file, then -D flags
	f=$1
	shift
	for b in old new; do
		eval bin=\$$b
		timeout 600 "$bin" lint --format json "$f" "$@" >"$tmp/$b.out" 2>"$tmp/$b.err"
		echo $? >"$tmp/$b.rc"
	done
	runs=$((runs + 1))
	for x in out err rc; do
		if ! cmp -s "$tmp/old.$x" "$tmp/new.$x"; then
			diffs=$((diffs + 1))
			echo "DIFF $f $* ($x)${LINT_COMPARE_KEEP:+ kept as $diffs}"
			if [ -n "${LINT_COMPARE_KEEP:-}" ]; then
				mkdir -p "$LINT_COMPARE_KEEP"
				for y in out err rc; do
					cp "$tmp/old.$y" "$LINT_COMPARE_KEEP/$diffs-old.$y"
					cp "$tmp/new.$y" "$LINT_COMPARE_KEEP/$diffs-new.$y"
				done
			fi
			break
		fi
	done
}
for f in $(find programs -name '*.pto' | sort); do
	one "$f"
	if grep -q '\bRANKS\b' "$f"; then
		for r in $ranks; do
			one "$f" -D RANKS="$r"
		done
	fi
done
echo "$runs lints compared, $diffs differ"
[ "$diffs" -eq 0 ]
