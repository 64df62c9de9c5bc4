#!/bin/bash
# ptoas-corpus-report.sh lints every .pto file of the fetched corpus (see
# fetch-ptoas-corpus.sh) and prints one line per file, tab-separated:
#
#   FILE  STATUS  LINT_EXIT  OUT_OF_BOUNDS  UNINIT_READS  UNINIT_READS_OF_GM  KINDS / FIRST ERROR
#
# STATUS is ok (assembles and yields a kernel), nokernel (assembles to an
# empty program) or asmfail (rejected; the first error follows). A summary
# goes to stderr. docs/mlir.md's corpus numbers come from this script.
# Every file is read as an A2/A3 kernel (--pto-arch=a3), A5 modules too, so
# lint covers the whole corpus; ptoas-corpus-run.sh judges the files by
# their RUN lines instead.
#
#   scripts/ptoas-corpus-report.sh [PTOASM_BINARY] > report.tsv
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-}
. "$root/scripts/corpus-setup.sh"
command -v jq >/dev/null || { echo "needs jq" >&2; exit 2; }
err=$(mktemp)
out=$(mktemp)
find "$dir" -name '*.pto' | sort | while IFS= read -r f; do
	rel=${f#"$dir"/}
	a=$(timeout 60 "$bin" asm --pto-arch=a3 "$f" 2>&1)
	if [ $? -ne 0 ]; then
		printf '%s\tasmfail\t-\t-\t-\t-\t%s\n' "$rel" "$(echo "$a" | grep -m1 error | sed "s#^$dir/##" | cut -c1-200)"
		continue
	fi
	if ! echo "$a" | grep -q '^kernel '; then
		printf '%s\tnokernel\t-\t-\t-\t-\t\n' "$rel"
		continue
	fi
	j=$(timeout 300 "$bin" lint --pto-arch=a3 --format json --max-time 120s "$f" 2>"$err")
	rc=$?
	q() { echo "$j" | jq -r "$1" 2>/dev/null; }
	printf '%s\tok\t%s\t%s\t%s\t%s\t%s %s\n' "$rel" "$rc" \
		"$(q '[.findings[]? | select(.kind=="out-of-bounds")] | length')" \
		"$(q '[.findings[]? | select(.kind=="uninit-read")] | length')" \
		"$(q '[.findings[]? | select(.kind=="uninit-read" and (.buffer|startswith("@")))] | length')" \
		"$(q '[.findings[]?.kind] | group_by(.) | map("\(.[0])=\(length)") | join(",")')" \
		"$(grep -m1 -o 'fault.*' "$err" | cut -c1-120)"
done >"$out"
cat "$out"
awk -F'\t' '
	{ st[$2]++ }
	$2 == "ok" { o += $4; u += $5; g += $6; if ($4 > 0) fo++; if ($6 > 0) fg++ }
	END {
		printf "files: %d yield a kernel, %d assemble to no kernel, %d rejected\n", st["ok"], st["nokernel"], st["asmfail"] > "/dev/stderr"
		printf "out-of-bounds findings: %d (in %d files); uninitialised reads: %d, of GM kernel arguments %d (in %d files)\n", o, fo, u, g, fg > "/dev/stderr"
	}' "$out"
rm -f "$err" "$out"
