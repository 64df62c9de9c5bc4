package asm

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFileLimit(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("hello"), 0o644)
	tests := []struct {
		name  string
		path  string
		limit int64
		want  string // error substring; "" for success
	}{
		{"within", small, 5, ""},
		// The buffer was sized min(size, limit+1): a MaxInt64 limit (64 x
		// --max-file-size, saturated) wrapped it negative, a panic.
		{"largest limit", small, math.MaxInt64, ""},
		{"over", small, 4, "small: larger than the 4B limit on input files (--flag)"},
		{"device", "/dev/zero", 1 << 10, "/dev/zero: larger than the 1KiB limit on input files (--flag)"},
		{"directory", dir, 1 << 10, "is a directory"},
		{"missing", filepath.Join(dir, "nope"), 1 << 10, "no such file"},
	}
	for _, tt := range tests {
		b, err := ReadFileLimit(tt.path, tt.limit, "--flag")
		if tt.want == "" {
			if err != nil || string(b) != "hello" {
				t.Errorf("%s: %q, %v", tt.name, b, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
		var le *FileLimitError
		if strings.Contains(tt.want, "larger") && !errors.As(err, &le) {
			t.Errorf("%s: %T, want *FileLimitError", tt.name, err)
		}
	}
	if ok, err := IsRegularFile("/dev/zero"); ok || err != nil {
		t.Errorf("IsRegularFile(/dev/zero) = %v, %v", ok, err)
	}
}

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"512", 512, false}, {"1KiB", 1 << 10, false}, {"768MiB", 768 << 20, false}, {"2G", 2 << 30, false},
		{"3GB", 3 << 30, false}, {"1TiB", 1 << 40, false}, {"lots", 0, true}, {"", 0, true}, {"-1GiB", 0, true},
		{"99999999999TiB", 0, true}, {"1.5GiB", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseBytes(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.err)
		}
		if !tt.err {
			if back, err := ParseBytes(FormatBytes(got)); err != nil || back != got {
				t.Errorf("ParseBytes(FormatBytes(%d) = %q) = %d, %v", got, FormatBytes(got), back, err)
			}
		}
	}
}

// TestFprintBounded: a long line is quoted as a window around the column,
// and after MaxPrinted diagnostics the rest are counted, not printed.
func TestFprintBounded(t *testing.T) {
	line := strings.Repeat("x", 5000) + "BAD" + strings.Repeat("y", 5000)
	src := Sources{"f.pto": []byte(line + "\n")}
	var l ErrorList
	l.Add(Span{Pos: Pos{File: "f.pto", Line: 1, Col: 5001}}, "bad")
	var b strings.Builder
	l.Fprint(&b, src)
	out := strings.Split(b.String(), "\n")
	if len(out[1]) > maxQuote+20 || !strings.Contains(out[1], "...xxx") || !strings.Contains(out[1], "BADyyy") || !strings.HasSuffix(out[1], "...") {
		t.Errorf("quoted line %q", out[1])
	}
	if caret := strings.Index(out[2], "^"); caret < 0 || out[1][caret:caret+3] != "BAD" {
		t.Errorf("caret not under the column:\n%s\n%s", out[1], out[2])
	}

	l = nil
	var text strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&text, "line %d\n", i)
		l.Add(Span{Pos: Pos{File: "g.pto", Line: i + 1, Col: 1}}, "e%d", i)
	}
	b.Reset()
	l.Fprint(&b, Sources{"g.pto": []byte(text.String())})
	if n := strings.Count(b.String(), ": error: "); n != MaxPrinted {
		t.Errorf("%d diagnostics printed, want %d", n, MaxPrinted)
	}
	if !strings.HasSuffix(b.String(), fmt.Sprintf("too many errors: %d more not shown\n", 1000-MaxPrinted)) {
		t.Errorf("output ends %q", b.String()[b.Len()-80:])
	}
}

// TestMessageWordsBounded: a message quoting a huge token (a damaged
// file's 300 KB name, a 5,000-digit literal) prints the token's head and
// its length; the message's other words are kept.
func TestMessageWordsBounded(t *testing.T) {
	long := strings.Repeat("L", 300000)
	var l ErrorList
	l.Add(Span{Pos: Pos{File: "f.pto", Line: 1, Col: 1}}, "undefined kernel %s (did you mean k?)", long)
	var b strings.Builder
	l.Fprint(&b, Sources{"f.pto": []byte("run " + long + "\n")})
	first, _, _ := strings.Cut(b.String(), "\n")
	want := "f.pto:1:1: error: undefined kernel " + strings.Repeat("L", maxWord-112) + "...(300000 bytes) (did you mean k?)"
	if first != want {
		t.Errorf("first line (%d bytes) %.300q, want %.300q", len(first), first, want)
	}
	if got := l[0].Error(); got != want {
		t.Errorf("Error() (%d bytes) %.300q", len(got), got)
	}
	// Short messages print as they are, spaces and all.
	path := "/" + strings.Repeat("long-directory-name/", 24) + "f.pto" // 486 bytes
	for _, msg := range []string{"a  b\tc", strings.Repeat("word ", 200), " lead and trail ", "cannot read " + path + ": not a regular file"} {
		if got := clipWords(msg); got != msg {
			t.Errorf("clipWords(%q) = %q", msg, got)
		}
	}
}

func TestScaledLimit(t *testing.T) {
	for _, tc := range []struct{ limit, k, want int64 }{
		{1 << 20, 64, 64 << 20},
		{1<<57 - 1, 64, 64 * (1<<57 - 1)},
		{1 << 57, 64, math.MaxInt64},
		{1 << 62, 64, math.MaxInt64},
		{5, 0, 0},
	} {
		if got := ScaledLimit(tc.limit, tc.k); got != tc.want {
			t.Errorf("ScaledLimit(%d, %d) = %d, want %d", tc.limit, tc.k, got, tc.want)
		}
	}
}
