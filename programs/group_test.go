package programs_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/programs"
)

// lintReplay lints obj with every event through the detector's batches
// (hazard.Options.Batched), each batch replayed in the machine's order or
// core by core (InOrder): the findings, notes and result as text.
func lintReplay(obj *asm.Object, inOrder bool) (string, error) {
	var m *machine.Machine
	det := hazard.New(hazard.Options{Batched: true, InOrder: inOrder,
		CoreName: func(rank, core int) string { return m.CoreName(rank, core) }})
	m, err := machine.New(obj, machine.Options{Observers: []machine.Observer{det}, TimingOnly: true})
	if err != nil {
		return "", err
	}
	res, runErr := m.Run()
	if runErr != nil {
		det.NoteError(runErr)
	}
	b, err := json.MarshalIndent(hazard.Merge(det.Findings(), hazard.CheckObject(obj)), "", " ")
	if err != nil {
		return "", err
	}
	r, err := json.Marshal(res)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s\nresult: %s\nerr: %v", b, r, runErr), nil
}

// sameReplay fails t unless obj's findings are the same, field by field
// (counts and named instances too), with each batch replayed core by core
// and in the machine's order (lint round 31).
func sameReplay(t *testing.T, obj *asm.Object, what string) {
	t.Helper()
	want, err := lintReplay(obj, true)
	if err != nil {
		t.Skip(err)
	}
	got, err := lintReplay(obj, false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n")); diff != "" {
		t.Errorf("%s: in the machine's order (-) and core by core (+):\n%s", what, diff)
	}
}

// TestGroupedReplay lints every program (at its test sizes, and at 2 and
// 8 ranks where it has RANKS) and every corpus kernel with each batch of
// events replayed core by core and in the machine's order, and requires
// the same findings and result: the segments a batch is cut into end at
// every event that carries happens-before between cores, so the two are
// linearisations of one happens-before order (machine/hazard/group.go).
func TestGroupedReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("lints every program and corpus kernel twice")
	}
	t.Run("programs", func(t *testing.T) {
		for _, name := range programs.List() {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				path, defs, sizes := rankedSizes(t, name, "2", "8")
				for _, more := range sizes {
					sameReplay(t, assembleSize(t, path, defs, more), fmt.Sprint(more))
				}
			})
		}
	})
	t.Run("corpus", func(t *testing.T) {
		dir := corpusDirs[0]
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			t.Skip("no PTOAS corpus in corpus/")
		}
		fe := corpusFrontend()
		filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(p, ".pto") {
				return nil
			}
			obj, errs := asm.Assemble(fe, p, nil)
			if errs.HasErrors() || obj == nil || len(obj.Kernels) == 0 || obj.Launch == nil {
				return nil
			}
			rel, _ := filepath.Rel(dir, p)
			t.Run(rel, func(t *testing.T) {
				t.Parallel()
				sameReplay(t, obj, rel)
			})
			return nil
		})
	})
}
