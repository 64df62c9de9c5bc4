package machine

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// TestEveryOpHasSemantics walks the ISA table: every row reaches semantics by
// its opcode, either data semantics (Execute) or the engine's own handling.
func TestEveryOpHasSemantics(t *testing.T) {
	for _, op := range asm.ISA {
		sm := semTable[op.Op]
		if sm.exec == nil && !sm.engine {
			t.Errorf("%s: no semantics (machine/sem.go)", op.Name)
		}
		if sm.exec != nil && sm.engine {
			t.Errorf("%s: both data semantics and engine handling", op.Name)
		}
		if sm.engine && op.Family != asm.FamSync && op.Family != asm.FamScalar && op.Family != asm.FamComm && op.Family != asm.FamView {
			t.Errorf("%s: a %s instruction is marked as the engine's", op.Name, op.Family)
		}
	}
}

// executed records the opcodes the functional tests built an op for (mkOp),
// for TestMain's coverage check.
var executed struct {
	sync.Mutex
	ops [asm.NumOpcodes]bool
}

func noteExecuted(o asm.Opcode) {
	executed.Lock()
	executed.ops[o] = true
	executed.Unlock()
}

// TestMain runs the package's tests; a full run (no -run filter) then fails
// when an instruction with data semantics was never executed by a functional
// test, so a new instruction cannot land without one.
func TestMain(m *testing.M) {
	code := m.Run()
	if f := flag.Lookup("test.run"); code == 0 && f != nil && f.Value.String() == "" && !testing.Short() {
		var missing []string
		for _, op := range asm.ISA {
			if semTable[op.Op].exec != nil && !executed.ops[op.Op] {
				missing = append(missing, op.Name)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			fmt.Fprintf(os.Stderr, "FAIL: no functional test executes %s\n", strings.Join(missing, ", "))
			code = 1
		}
	}
	os.Exit(code)
}
