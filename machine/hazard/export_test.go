package hazard

// CPUTime is cpuTime for the external tests' benchmarks (lint_bench_test.go,
// floor_bench_test.go), so that both packages read one definition.
var CPUTime = cpuTime

// TmovMLIR and MLIRFE are tmovMLIR and mlirFE for BenchmarkLintRepeatedTmov.
var (
	TmovMLIR = tmovMLIR
	MLIRFE   = mlirFE
)
