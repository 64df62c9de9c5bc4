package asm

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// DefaultMaxFileSize caps every text file ptoasm reads (sources, includes,
// profiles, suppressions) unless --max-file-size says otherwise: real ones
// are kilobytes, and parsing takes up to a few hundred bytes of memory per
// byte of source (10 MB of newlines took 2.5 GB), so the cap keeps a stray
// `include "/dev/zero"` or a generated monster under the memory goal.
const DefaultMaxFileSize = 1 << 20

// FileLimitError is a file over its size cap. Flag names the command-line
// flag that raises the cap ("" when the cap follows from something else,
// such as the size of the tensor a data file fills).
type FileLimitError struct {
	Path  string
	Limit int64
	Flag  string
}

func (e *FileLimitError) Error() string {
	if e.Flag == "" {
		return fmt.Sprintf("%s: larger than %s, the most it may hold", e.Path, FormatBytes(e.Limit))
	}
	return fmt.Sprintf("%s: larger than the %s limit on input files (%s)", e.Path, FormatBytes(e.Limit), e.Flag)
}

// ReadFileLimit reads a whole file of at most limit bytes; a larger one is a
// *FileLimitError naming flag. It reads through a limited reader rather than
// trusting the size from stat, so a pipe, /dev/stdin or a device such as
// /dev/zero ends in the same error instead of an unbounded read. A
// directory is an error. limit <= 0 means DefaultMaxFileSize.
func ReadFileLimit(path string, limit int64, flag string) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultMaxFileSize
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory", path)
	}
	if st.Mode().IsRegular() && st.Size() > limit {
		return nil, &FileLimitError{Path: path, Limit: limit, Flag: flag}
	}
	size := int64(512)
	if st.Mode().IsRegular() {
		size = st.Size() + 1 // +1 sees EOF without growing the buffer
	}
	// min(size, limit+1), without the +1 wrapping when limit is MaxInt64.
	buf := make([]byte, 0, min(size-1, limit)+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, &FileLimitError{Path: path, Limit: limit, Flag: flag}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return buf, nil
			}
			return nil, err
		}
	}
}

// IsRegularFile reports whether path names a regular file (following
// symbolic links): includes must, so that `include "/dev/zero"` or a FIFO
// is an error at the include rather than a read that never ends.
func IsRegularFile(path string) (bool, error) {
	st, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	return st.Mode().IsRegular(), nil
}

// ScaledLimit is k times limit, saturating at MaxInt64: a limit derived
// from a flag (64 x --max-file-size for a message or a sweep shard) must not
// wrap to 0 or below when the flag is near its largest, 2^62.
func ScaledLimit(limit, k int64) int64 {
	if k > 0 && limit > math.MaxInt64/k {
		return math.MaxInt64
	}
	return limit * k
}

// FormatBytes prints a byte count the way the limits' flags accept it:
// "1GiB", "512MiB", "1536KiB", "100B"; a size of a megabyte or more that is
// no whole number of KiB is shown to a tenth of a MiB, with its bytes.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.suffix)
		}
	}
	if n >= 1<<20 {
		return fmt.Sprintf("%.1fMiB (%d bytes)", float64(n)/(1<<20), n)
	}
	return fmt.Sprintf("%dB", n)
}

// ParseBytes reads a size as FormatBytes prints it: a count of bytes with an
// optional suffix KiB, MiB, GiB or TiB (K, M, G, T and KB, MB, GB, TB are
// read as the same powers of 1024).
func ParseBytes(s string) (int64, error) {
	num := s
	shift := uint(0)
	for _, u := range []struct {
		suffixes []string
		shift    uint
	}{
		{[]string{"TiB", "TB", "T"}, 40}, {[]string{"GiB", "GB", "G"}, 30},
		{[]string{"MiB", "MB", "M"}, 20}, {[]string{"KiB", "KB", "K", "k"}, 10}, {[]string{"B"}, 0},
	} {
		found := false
		for _, suf := range u.suffixes {
			if len(s) > len(suf) && s[len(s)-len(suf):] == suf {
				num, shift, found = s[:len(s)-len(suf)], u.shift, true
				break
			}
		}
		if found {
			break
		}
	}
	var n int64
	if num == "" {
		return 0, fmt.Errorf("%q: want a size such as 512MiB or 2GiB", s)
	}
	for _, c := range num {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q: want a size such as 512MiB or 2GiB", s)
		}
		if n > (1<<62)/10 {
			return 0, fmt.Errorf("%q: too large", s)
		}
		n = n*10 + int64(c-'0')
	}
	if n > (1<<62)>>shift {
		return 0, fmt.Errorf("%q: too large", s)
	}
	return n << shift, nil
}
