package hazard

import (
	"fmt"
	"os"
)

var dbgOn = os.Getenv("PA_DEBUG") != ""

func (d *Detector) dbg(format string, a ...any) {
	if dbgOn {
		fmt.Fprintf(os.Stderr, "DBG "+format+"\n", a...)
	}
}

func (d *Detector) recStr(r *rec) string {
	line := 0
	if r.op != nil && r.op.Instr != nil {
		line = r.op.Instr.Span.Pos.Line
	}
	return fmt.Sprintf("L%d/a%d/e%d/w%v/it%v", line, r.agent, r.epoch, r.write, r.iter[:r.niter])
}
