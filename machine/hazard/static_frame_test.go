package hazard

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/parser/mlir"
)

// TestStaticTemplatesMatchGeneralPath runs the static pass on every shipped
// program (allgather_gemm also at its kernels.md sizes, the ring at 384
// ranks) and every PTOAS corpus kernel three ways: with loop templates off,
// with every template use checked against the general path (checkTemplate
// panics on any difference in result, memo entries, work, findings or
// symbols), and as shipped. The findings must be the same.
func TestStaticTemplatesMatchGeneralPath(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the static pass runs three times on every program and corpus kernel")
	}
	templateChecks = 0
	objs := staticObjects(t)
	// What the pass did besides its findings, per kernel.
	var did []string
	staticDone = func(c *checker) { did = append(did, staticCounts(c)) }
	defer func() { staticDone = nil }()
	for name, obj := range objs {
		did = nil
		templatesOff = true
		general := CheckObject(obj)
		templatesOff = false
		generalDid := did
		checked := func() (fs []Finding) {
			checkTemplates = true
			defer func() {
				checkTemplates = false
				if r := recover(); r != nil {
					t.Errorf("%s: %v", name, r)
				}
			}()
			return CheckObject(obj)
		}()
		did = nil
		shipped := CheckObject(obj)
		if d := cmp.Diff(generalDid, did); d != "" {
			t.Errorf("%s: the pass did other work with templates (-general +templates):\n%s", name, d)
		}
		if d := cmp.Diff(general, checked); d != "" {
			t.Errorf("%s: findings with templates checked differ from the general path (-general +checked):\n%s", name, d)
		}
		if d := cmp.Diff(general, shipped); d != "" {
			t.Errorf("%s: findings with templates differ from the general path (-general +templates):\n%s", name, d)
		}
	}
	t.Logf("%d template uses compared with the general path", templateChecks)
	if templateChecks < 100 {
		t.Errorf("only %d template uses compared: the programs no longer exercise loop templates", templateChecks)
	}
}

// staticObjects is every shipped program, allgather_gemm also at its
// kernels.md sizes, the ring at 384 ranks and every PTOAS corpus kernel.
func staticObjects(t *testing.T) map[string]*asm.Object {
	t.Helper()
	objs := map[string]*asm.Object{}
	eachProgram(t, func(name string, obj *asm.Object) { objs[name] = obj })
	for _, m := range []string{"1024", "16384"} {
		objs["allgather_gemm M="+m] = assembleProgram(t, "allgather_gemm",
			asm.Define{Name: "RANKS", Value: "8"}, asm.Define{Name: "M", Value: m}, asm.Define{Name: "K", Value: "4096"},
			asm.Define{Name: "N", Value: "4096"}, asm.Define{Name: "BASE_M", Value: "128"},
			asm.Define{Name: "COMPUTE_BLOCKS", Value: "24"}, asm.Define{Name: "COMM_BLOCKS", Value: "48"},
			asm.Define{Name: "MODE", Value: "pipelined"})
	}
	objs["ring_final RANKS=384"] = assembleProgram(t, "allreduce_ring/ring_final", asm.Define{Name: "RANKS", Value: "384"})
	corpus := corpusObjects(t)
	for name, obj := range corpus {
		objs[name] = obj
	}
	if len(corpus) == 0 {
		t.Log("no PTOAS corpus in corpus/: shipped programs only")
	}
	return objs
}

// corpusObjects assembles the PTOAS corpus kernels (as A3 kernels, as the
// corpus lint test reads them) found under the checkout's corpus/.
func corpusObjects(t *testing.T) map[string]*asm.Object {
	t.Helper()
	dir := filepath.Join("..", "..", "corpus")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil
	}
	fe := mlir.Frontend(mlir.Options{Arch: "a3"})
	out := map[string]*asm.Object{}
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".pto") {
			return nil
		}
		if obj, errs := asm.Assemble(fe, p, nil); !errs.HasErrors() && obj != nil && len(obj.Kernels) > 0 {
			out[fmt.Sprint("corpus ", p)] = obj
		}
		return nil
	})
	return out
}
