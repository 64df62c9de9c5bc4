#!/bin/bash
# ptoas-corpus-cli.sh runs every .pto file of the fetched corpus (see
# fetch-ptoas-corpus.sh) through the CLI as a user would, with each of
#
#   asm | lint | run --timing-only | run      (each under timeout $TIMEOUT, 30 s)
#
# and sorts each outcome into one class:
#
#   ok        exit 0
#   findings  exit 1 from lint or run (the program was read and judged)
#   located   exit 2 and the first line of stderr is FILE:LINE:COL: error: ...
#   guard     exit 2 from a run guard (a message naming the flag that raises it)
#   unclear   exit 2 with any other message (no position, or no message)
#   panic     a Go panic or runtime error on stderr
#   hang      killed by the timeout (exit 124)
#   wrongexit any other exit status, exit 1 from asm, or an error message
#             with exit 0
#
# It prints one tab-separated line per file (FILE, then the four classes,
# then UNRUN, then the first stderr line of the first command that did not
# succeed), and a count per command and class on stderr. UNRUN lists the
# source lines of tile instructions (not S, not flags or barriers) that a
# timing-only run at the default argument values never executed: code that
# lint's verdict does not cover until -D picks values that reach it (a
# constant-false branch, a mode argument compared for equality, ...).
# Extra arguments go to every command, after -- (e.g. -- --pto-arch=a3 to
# read A5 files as A2/A3 kernels).
#
#   scripts/ptoas-corpus-cli.sh [-b PTOASM] [-j JOBS] [-- EXTRA FLAGS...] > cli.tsv
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=
jobs=2
while getopts b:j: o; do
	case $o in
	b) bin=$OPTARG ;;
	j) jobs=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
. "$root/scripts/corpus-setup.sh"
command -v jq >/dev/null || { echo "needs jq" >&2; exit 2; }
export bin dir TIMEOUT=${TIMEOUT:-30}
export EXTRA="$*"

# classify CMD RC STDERR_FILE prints the class of one outcome.
classify() {
	local cmd=$1 rc=$2 e=$3
	if grep -qE '^(panic: |fatal error: |goroutine [0-9]+ \[)' "$e"; then
		echo panic
	elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo hang
	elif [ "$rc" = 0 ]; then
		if grep -q ': error:' "$e"; then echo wrongexit; else echo ok; fi
	elif [ "$rc" = 1 ]; then
		if [ "$cmd" = asm ]; then echo wrongexit; else echo findings; fi
	elif [ "$rc" = 2 ]; then
		local first
		first=$(grep -m1 . "$e")
		if [[ $first == *.pto:[0-9]*:[0-9]*:\ error:* ]]; then
			echo located
		elif grep -qE 'stopped at cycle|--max-(cycles|idle-cycles|time|memory)' "$e"; then
			echo guard
		else
			echo unclear
		fi
	else
		echo wrongexit
	fi
}
export -f classify

one() {
	local f=$1 rel=${1#"$dir"/} e line="" msg="" c
	e=$(mktemp)
	for cmd in asm lint timing run; do
		case $cmd in
		asm) args=(asm) ;;
		lint) args=(lint) ;;
		timing) args=(run --timing-only) ;;
		run) args=(run) ;;
		esac
		# shellcheck disable=SC2086
		timeout "$TIMEOUT" "$bin" "${args[@]}" $EXTRA "$f" >/dev/null 2>"$e"
		c=$(classify "$cmd" $? "$e")
		line+=$'\t'$c
		if [ -z "$msg" ] && [ "$c" != ok ] && [ "$c" != findings ]; then
			msg="$cmd: $(grep -m1 . "$e" | sed "s#^$dir/##" | cut -c1-200)"
		fi
	done
	rm -f "$e"
	printf '%s%s\t%s\t%s\n' "$rel" "$line" "$(unrun "$f")" "$msg"
}
export -f one

# unrun FILE prints the lines of FILE's tile instructions that a
# timing-only run never executed, or "-".
unrun() {
	local f=$1 a sites ran miss
	# shellcheck disable=SC2086
	a=$(timeout "$TIMEOUT" "$bin" asm $EXTRA "$f" 2>/dev/null) || { echo -; return; }
	sites=$(echo "$a" | awk '$1 ~ /^[0-9]+$/ && $3 != "S" && $4 !~ /^(set_flag|wait_flag|pipe_barrier|ffts_set|ffts_wait)$/ { sub(/.*:/, "", $2); print $2 }' | sort -u)
	# shellcheck disable=SC2086
	ran=$(timeout "$TIMEOUT" "$bin" run --timing-only --stats=on --no-lint --format json $EXTRA "$f" 2>/dev/null | jq -r '.hotspots[]?.line' | sort -u)
	miss=$(comm -23 <(echo "$sites") <(echo "$ran") | grep . | sort -n | tr '\n' ' ')
	echo "${miss:--}"
}
export -f unrun

out=$(mktemp)
find "$dir" -name '*.pto' | sort | xargs -d '\n' -n1 -P "$jobs" bash -c 'one "$1"' _ | sort >"$out"
cat "$out"
awk -F'\t' '
	{ for (i = 2; i <= 5; i++) n[i, $i]++; files++ }
	$6 != "-" { unrun++ }
	END {
		split("asm lint run--timing-only run", name, " ")
		printf "%d files\n", files > "/dev/stderr"
		for (i = 2; i <= 5; i++) {
			s = ""
			split("ok findings located guard unclear panic hang wrongexit", cls, " ")
			for (k = 1; k <= 8; k++) if (n[i, cls[k]]) s = s sprintf(" %s=%d", cls[k], n[i, cls[k]])
			printf "%-16s%s\n", name[i - 1], s > "/dev/stderr"
		}
		printf "%d files have tile instructions their default arguments never run\n", unrun > "/dev/stderr"
	}' "$out"
rm -f "$out"
