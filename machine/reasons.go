package machine

import (
	"fmt"

	"github.com/ptoasm/ptoasm/asm"
)

// flagReasons holds the stall reason of every valid flag, built once: a
// pipe waiting on a flag is the most common stall, and formatting its reason
// per event was a tenth of a detector run.
var flagReasons = func() (t [asm.NumPipes][asm.NumPipes][asm.NumEventIDs]string) {
	for s := range t {
		for d := range t[s] {
			for id := range t[s][d] {
				t[s][d][id] = fmt.Sprintf("wait_flag %s->%s #%d", asm.Pipe(s), asm.Pipe(d), id)
			}
		}
	}
	return t
}()

// flagReasonOf is f's reason from the table, or "" for an id outside the event range.
func flagReasonOf(f Flag) string {
	if f.Src < asm.NumPipes && f.Dst < asm.NumPipes && f.ID >= 0 && f.ID < asm.NumEventIDs {
		return flagReasons[f.Src][f.Dst][f.ID]
	}
	return ""
}
