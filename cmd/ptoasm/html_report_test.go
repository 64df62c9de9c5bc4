package main

import (
	"image"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/internal/headless"
)

// chromium opens page in headless Chromium (1400x1400): its DOM and a
// screenshot.
func chromium(t *testing.T, page string) (string, image.Image) {
	t.Helper()
	return headless.Chromium(t, page, 1400, 1400)
}

// openPage checks that the page at path fetches nothing, then opens it in
// Chromium.
func openPage(t *testing.T, path string) (string, image.Image) {
	t.Helper()
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?i)(<script[^>]+src=|<link |<img |@import|url\(\s*['"]?(https?:|//))`).Find(page); m != nil {
		t.Errorf("the page fetches something: %s", m)
	}
	return chromium(t, path)
}

// TestHTMLReportInChromium: run --report writes a self-contained page whose
// charts render: a utilisation line per pipe, the compute kernel's point
// under its roofline, and the tables.
func TestHTMLReportInChromium(t *testing.T) {
	page := filepath.Join(t.TempDir(), "r.html")
	if code, _, errOut := runCLI("run", "allgather_gemm", "--report", page); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	dom, img := openPage(t, page)
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
	if n := headless.Coloured(img, image.Rect(0, 150, 1400, 900)); n < 3000 {
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
	dom, img := openPage(t, page)
	for id, lines := range map[string]int{"sweep-0": 2, "sweep-1": 3} {
		svg := regexp.MustCompile(`(?s)<svg[^>]*id="` + id + `".*?</svg>`).FindString(dom)
		if n := strings.Count(svg, "<polyline"); n != lines {
			t.Errorf("%s: %d lines, want %d", id, n, lines)
		}
	}
	if !strings.Contains(dom, "TFLOPS against dma.gm_l1.bw") || !strings.Contains(dom, "(best)") {
		t.Error("no metric title or best point")
	}
	if n := headless.Coloured(img, image.Rect(0, 60, 700, 700)); n < 1500 {
		t.Errorf("only %d coloured pixels where the charts are", n)
	}
}
