package memory

import (
	"fmt"
	"testing"
)

// TestIm2col checks the golden im2col on maps small enough to write the
// patches out by hand.
func TestIm2col(t *testing.T) {
	x := &Array{Shape: []int{4, 1}, Data: []float64{1, 2, 3, 4}} // [[1, 2], [3, 4]]
	for _, tc := range []struct {
		name                     string
		kh, kw, stride, dil, pad int
		value                    float64
		want                     string
	}{
		{"2×2 no padding", 2, 2, 1, 1, 0, 0, "[1 4] [1 2 3 4]"},
		{"1×2 padding 1 value 9", 1, 2, 2, 1, 1, 9, "[4 2] [9 9 9 9 9 3 4 9]"},
		{"2×2 dilation 2 padding 1", 2, 2, 1, 2, 1, -1, "[4 4] [-1 -1 -1 4 -1 -1 3 -1 -1 2 -1 -1 1 -1 -1 -1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Im2col(x, 2, 2, tc.kh, tc.kw, tc.stride, tc.dil, tc.pad, tc.value)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(a.Shape, a.Data); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
	if _, err := Im2col(x, 2, 2, 3, 3, 1, 1, 0, 0); err == nil {
		t.Error("a 3×3 filter on an unpadded 2×2 map: no error")
	}
}
