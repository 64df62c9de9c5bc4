package main

import (
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// chromium opens page in headless Chromium and returns its DOM after
// layout and a screenshot. CI installs chromium (.ci/run); elsewhere the
// test skips.
func chromium(t *testing.T, page string) (dom string, shot image.Image) {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (apt-get install -y chromium)")
	}
	dir := t.TempDir()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--window-size=1400,1400"}
	out, err := exec.Command(bin, append(flags, "--dump-dom", "file://"+page)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	png1 := filepath.Join(dir, "shot.png")
	if o, err := exec.Command(bin, append(flags, "--screenshot="+png1, "file://"+page)...).CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, o)
	}
	f, err := os.Open(png1)
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

// coloured counts saturated (not white or grey) pixels in r.
func coloured(img image.Image, r image.Rectangle) int {
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

// selfContained fails when the page would fetch anything.
func selfContained(t *testing.T, page []byte) {
	t.Helper()
	if m := regexp.MustCompile(`(?i)(<script[^>]+src=|<link |<img |@import|url\(\s*['"]?(https?:|//))`).Find(page); m != nil {
		t.Errorf("the page fetches something: %s", m)
	}
}

// TestHTMLReportInChromium: run --report writes a self-contained page whose
// charts render: a utilisation line per pipe, the compute kernel's point
// under its roofline, and the tables.
func TestHTMLReportInChromium(t *testing.T) {
	page := filepath.Join(t.TempDir(), "r.html")
	if code, _, errOut := runCLI("run", "allgather_gemm", "--report", page); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	selfContained(t, b)
	dom, img := chromium(t, page)
	util := regexp.MustCompile(`(?s)<svg[^>]*id="utilisation".*?</svg>`).FindString(dom)
	for _, pipe := range []string{"MTE2", "MTE1", "M", "FIX", "MTE3"} {
		if !strings.Contains(util, `data-name="`+pipe+`"`) {
			t.Errorf("no utilisation line for %s", pipe)
		}
	}
	roof := regexp.MustCompile(`(?s)<svg[^>]*id="roofline".*?</svg>`).FindString(dom)
	if !strings.Contains(roof, `class="plabel"`) || !strings.Contains(roof, ">compute</text>") || !strings.Contains(roof, "<circle") {
		t.Error("no roofline point for the compute kernel")
	}
	for _, id := range []string{"modes", "summary", "bandwidth", "links", "collectives", "hotspots", "kernels"} {
		if !strings.Contains(dom, `<table id="`+id+`"`) {
			t.Errorf("no %s table", id)
		}
	}
	// The two charts sit side by side or stacked below the header: their
	// lines and points are drawn in colour.
	if n := coloured(img, image.Rect(0, 150, 1400, 900)); n < 3000 {
		t.Errorf("only %d coloured pixels where the charts are", n)
	}
}

// TestSweepHTMLInChromium: sweep --report charts the metric against each
// swept parameter, one line per value of the other.
func TestSweepHTMLInChromium(t *testing.T) {
	page := filepath.Join(t.TempDir(), "s.html")
	if code, _, errOut := runCLI("sweep", "gemm_db", "--set", "dma.gm_l1.bw=32,64,128", "-D", "K=256,512", "--report", page); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	selfContained(t, b)
	dom, img := chromium(t, page)
	for id, lines := range map[string]int{"sweep-0": 2, "sweep-1": 3} {
		svg := regexp.MustCompile(`(?s)<svg[^>]*id="` + id + `".*?</svg>`).FindString(dom)
		if n := strings.Count(svg, "<polyline"); n != lines {
			t.Errorf("%s: %d lines, want %d", id, n, lines)
		}
	}
	if !strings.Contains(dom, "TFLOPS against dma.gm_l1.bw") || !strings.Contains(dom, "(best)") {
		t.Error("no metric title or best point")
	}
	if n := coloured(img, image.Rect(0, 60, 700, 700)); n < 1500 {
		t.Errorf("only %d coloured pixels where the charts are", n)
	}
}
