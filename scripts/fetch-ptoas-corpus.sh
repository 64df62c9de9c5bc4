#!/bin/sh
# fetch-ptoas-corpus.sh copies the .pto corpus out of local git mirrors into the
# git-ignored corpus/ folder, for parser/mlir's corpus test. Nothing is committed:
# the corpus stays third-party code.
#
#   scripts/fetch-ptoas-corpus.sh PTOAS_GIT_DIR [PTO_DSL_GIT_DIR]
#
# PTOAS_GIT_DIR is a clone or bare mirror of hw-native-sys/PTOAS; the files of
# test/basic and test/samples at its HEAD land in corpus/ptoas/. The optional
# PTO_DSL_GIT_DIR (huawei-csl/pto-dsl) contributes its *_manual_sync.pto files
# (hand-synchronised kernels) under corpus/pto-dsl/, from its history.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 PTOAS_GIT_DIR [PTO_DSL_GIT_DIR]" >&2
	exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/corpus"

# copy GITDIR PREFIX FILTER: every HEAD path matching the extended regexp FILTER
# is written under corpus/PREFIX/ keeping its repository path.
copy() {
	gd=$1 prefix=$2 filter=$3
	if git --git-dir="$gd/.git" rev-parse HEAD >/dev/null 2>&1; then
		gd="$gd/.git"
	fi
	head=$(git --git-dir="$gd" rev-parse HEAD)
	git --git-dir="$gd" ls-tree -r --name-only HEAD | grep -E "$filter" | while IFS= read -r p; do
		mkdir -p "$out/$prefix/$(dirname "$p")"
		git --git-dir="$gd" show "HEAD:$p" >"$out/$prefix/$p"
	done
	n=$(find "$out/$prefix" -name '*.pto' | wc -l)
	echo "$prefix: $n files from $head" >&2
	echo "$head" >"$out/$prefix/COMMIT"
}

mkdir -p "$out"
copy "$1" ptoas '\.pto$'
# pto-dsl deleted its generated .pto files from HEAD, so each *_manual_sync.pto
# is taken at the last commit that added or modified it.
if [ $# -eq 2 ]; then
	gd=$2
	if git --git-dir="$gd/.git" rev-parse HEAD >/dev/null 2>&1; then
		gd="$gd/.git"
	fi
	git --git-dir="$gd" log --all --format= --name-only --diff-filter=AM -- '*_manual_sync.pto' | sort -u | while IFS= read -r p; do
		[ -n "$p" ] || continue
		c=$(git --git-dir="$gd" log --all -1 --format=%H --diff-filter=AM -- "$p")
		mkdir -p "$out/pto-dsl/$(dirname "$p")"
		git --git-dir="$gd" show "$c:$p" >"$out/pto-dsl/$p"
		echo "$c $p" >>"$out/pto-dsl/COMMITS.new"
	done
	if [ -f "$out/pto-dsl/COMMITS.new" ]; then
		mv "$out/pto-dsl/COMMITS.new" "$out/pto-dsl/COMMITS"
	fi
	echo "pto-dsl: $(find "$out/pto-dsl" -name '*.pto' | wc -l) files" >&2
fi
