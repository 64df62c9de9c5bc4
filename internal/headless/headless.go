// Package headless opens pages in headless Chromium for tests: the DOM
// after the page's scripts ran, and a screenshot. CI installs chromium
// (.ci/run); where it is missing the test skips.
package headless

import (
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// Chromium opens page (a file path, optionally with a #fragment) at the
// given window size and returns its DOM and a screenshot.
func Chromium(t testing.TB, page string, width, height int) (dom string, shot image.Image) {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (apt-get install -y chromium)")
	}
	dir := t.TempDir()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--window-size=" + itoa(width) + "," + itoa(height)}
	out, err := exec.Command(bin, append(flags, "--dump-dom", "file://"+page)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	file := filepath.Join(dir, "shot.png")
	if o, err := exec.Command(bin, append(flags, "--screenshot="+file, "file://"+page)...).CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, o)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), img
}

func itoa(v int) string { return strconv.Itoa(v) }

// Coloured counts the saturated pixels (not white, grey or black) of img
// in r.
func Coloured(img image.Image, r image.Rectangle) int {
	n := 0
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if max(cr, cg, cb)-min(cr, cg, cb) > 0x3000 {
				n++
			}
		}
	}
	return n
}
