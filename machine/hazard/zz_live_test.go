package hazard_test

import (
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/programs"
)

func TestZZLive(t *testing.T) {
	out := os.Getenv("ZZLIVE")
	if out == "" {
		t.Skip()
	}
	runtime.MemProfileRate = 512
	path, _ := programs.Find("allreduce_ring/ring_final")
	obj, errs := asm.Assemble(embedFE, path, []asm.Define{{Name: "RANKS", Value: "384"}})
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	det := hazard.New(hazard.Options{})
	m, err := machine.New(obj, machine.Options{Observers: []machine.Observer{det}, TimingOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Run(); err != nil {
		t.Fatal(err)
	}
	_ = det.Findings()
	runtime.GC()
	f, _ := os.Create(out)
	pprof.Lookup("heap").WriteTo(f, 0)
	f.Close()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("live heap %d MB objects %d", ms.HeapAlloc>>20, ms.HeapObjects)
	runtime.KeepAlive(det)
	runtime.KeepAlive(m)
}
