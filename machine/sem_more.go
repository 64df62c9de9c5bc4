package machine

import "github.com/ptoasm/ptoasm/asm"

// initSemMore adds the semantics of the pto-isa instructions beyond the first
// table (sem.go).
func initSemMore(t *[asm.NumOpcodes]semantics) {}
