#!/bin/sh
# ptoas-corpus-run.sh holds ptoasm to the PTOAS corpus's own lit RUN lines
# (parser/mlir TestCorpus): files ptoas must reject are rejected at the op
# PTOAS names, A5-only files are rejected as A5, everything else yields a
# kernel. It prints one line per file,
#
#   pass|FAIL  FILE  WANT(kernel|reject|a5)  AGREE/CHECKED  REASON
#
# then the failures and the summary (pass rate, agreement of our
# diagnostics with the CHECKed ones). Fetch the corpus first:
#
#   scripts/fetch-ptoas-corpus.sh PTOAS_GIT_DIR [PTO_DSL_GIT_DIR]
#   scripts/ptoas-corpus-run.sh
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -d "$root/corpus" ]; then
	echo "no corpus/ (run scripts/fetch-ptoas-corpus.sh PTOAS_GIT_DIR)" >&2
	exit 2
fi
cd "$root"
go test ./parser/mlir -run '^TestCorpus$' -count=1 -v | sed -n 's/^ *corpus_test.go:[0-9]*: //p'
