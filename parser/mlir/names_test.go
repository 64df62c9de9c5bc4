package mlir

import (
	"strings"
	"testing"
)

// TestNamesScoped: a region's values are gone at its end, so sibling regions
// may reuse a name (MLIR's printer numbers an scf.if's branches, and
// consecutive loop bodies, from the same counter), and two functions may.
func TestNamesScoped(t *testing.T) {
	src := `func.func @k(%a: !pto.ptr<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %p = arith.cmpi eq, %c0, %c1 : index
  %r = scf.if %p -> (index) {
    %x = arith.addi %c1, %c1 : index
    scf.yield %x : index
  } else {
    %x = arith.addi %c2, %c2 : index
    scf.yield %x : index
  }
  scf.for %i = %c0 to %c2 step %c1 {
    %y = arith.addi %i, %c1 : index
  }
  scf.for %i = %c0 to %c2 step %c1 {
    %y = arith.addi %i, %c2 : index
  }
  return
}
func.func @h(%a: !pto.ptr<f32>) {
  %c0 = arith.constant 0 : index
  return
}
`
	_, errs := ParseFile("s.pto", []byte(src))
	for _, e := range errs {
		if strings.Contains(e.Error(), "redefinition") {
			t.Errorf("%v", e)
		}
	}
}
