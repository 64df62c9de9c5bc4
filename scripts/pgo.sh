#!/bin/sh
# pgo.sh remakes cmd/ptoasm/default.pgo, the CPU profile that `go build`,
# `go install` and `go run ./cmd/ptoasm` use for profile-guided optimisation
# (docs/performance.md, "Profile-guided optimisation"). It builds ptoasm
# without PGO, profiles it on the workloads below and merges the profiles.
#
#   scripts/pgo.sh
#
# The workloads are what kernel authors run, weighted towards the engine's
# hot loop: large timing-only runs, lint (the detector), the data path, and
# the assembler on every shipped program. Rerun it after changing the engine's
# hot paths; a stale profile still builds, it only helps less.
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -pgo=off -o "$tmp/ptoasm" ./cmd/ptoasm
p="$tmp/ptoasm"
n=0
prof() {
	n=$((n + 1))
	"$p" "$@" --cpuprofile "$tmp/$n.prof" >/dev/null || true # lint exits 1 on findings
}
big="-D RANKS=8 -D K=4096 -D N=4096 -D BASE_M=128 -D COMPUTE_BLOCKS=24 -D COMM_BLOCKS=48 -D MODE=pipelined"
# shellcheck disable=SC2086 # $big is a list of flags
prof run allgather_gemm --timing-only $big -D M=16384
# shellcheck disable=SC2086
prof lint allgather_gemm $big -D M=8192
prof run allgather_gemm
# The data path at a real size (issue 28): cube kernel, operand transposes, goldens.
prof run allgather_gemm -D RANKS=8 -D M=1024 -D K=1024 -D N=512
prof run gemm_db --timing-only -D BLOCKS=24 -D K=65536
prof run ffn_grid/unified_fixed
prof run allreduce_ring/ring_final
for name in $("$p" list); do
	prof lint "$name"
done
go tool pprof -proto "$tmp"/*.prof >cmd/ptoasm/default.pgo
echo "cmd/ptoasm/default.pgo: $n profiles merged"
