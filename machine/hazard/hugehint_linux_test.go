//go:build linux

package hazard

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestHugeHintAdvisesSlabs checks that the arrays the detector's slabs make
// lie in memory advised for huge pages (hugeHint): the kernel shows the
// advice as the "hg" flag of the mapping holding them (/proc/self/smaps).
// The hint changes no result (the lint tests run with it), so this is what
// says it is given at all, over the whole array.
func TestHugeHintAdvisesSlabs(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("no transparent huge pages in this kernel")
	}
	var cs cellSlab
	var ss sigSlab
	cases := []struct {
		name string
		lo   unsafe.Pointer
		n    uintptr
	}{
		{"cell chunk", unsafe.Pointer(cs.newCell(0, 1)), uintptr(cellChunk) * unsafe.Sizeof(cell{})},
		{"signal cells", unsafe.Pointer(ss.cells.get()), slabBytes},
		{"signal histories", unsafe.Pointer(ss.hist()), slabBytes},
		{"add boxes", unsafe.Pointer(ss.boxes.get()), slabBytes},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, at := range []uintptr{uintptr(tc.lo), uintptr(tc.lo) + tc.n - 1} {
				flags, err := vmFlags(at)
				if err != nil {
					t.Skip(err)
				}
				if !strings.Contains(" "+flags+" ", " hg ") {
					t.Errorf("byte %#x of the array: mapping flags %q lack hg", at, flags)
				}
			}
		})
	}
}

// vmFlags returns the VmFlags line of the mapping of /proc/self/smaps that
// holds address at.
func vmFlags(at uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			in = lo <= at && at < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), nil
		}
	}
	return "", fmt.Errorf("no mapping holds %#x", at)
}
