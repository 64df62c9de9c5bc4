package memory

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// NPY is the content of a .npy file: little-endian elements in C order.
// Kind is 'f', 'i' or 'u' and Size the element size, as in the numpy descr
// ("<f4" is Kind 'f', Size 4); f8 has no asm.DType but converts through Array.
type NPY struct {
	Kind  byte
	Size  int
	Shape []int
	Data  []byte
}

// maxNPYElems bounds what we accept from a file header before allocating.
// It is an int64 so that the bound holds, and compiles, where int is 32 bits.
const maxNPYElems int64 = 1 << 34

// DType is the asm dtype of the elements, or DTInvalid for f8.
func (n *NPY) DType() asm.DType {
	switch fmt.Sprintf("%c%d", n.Kind, n.Size) {
	case "f2":
		return asm.F16
	case "f4":
		return asm.F32
	case "i1":
		return asm.I8
	case "u1":
		return asm.U8
	case "i2":
		return asm.I16
	case "u2":
		return asm.U16
	case "i4":
		return asm.I32
	case "u4":
		return asm.U32
	case "i8":
		return asm.I64
	case "u8":
		return asm.U64
	}
	return asm.DTInvalid
}

// Elems is the number of elements.
func (n *NPY) Elems() int { return len(n.Data) / max(n.Size, 1) }

// Array decodes the elements to float64.
func (n *NPY) Array() *Array {
	a := &Array{Shape: append([]int{}, n.Shape...), Data: make([]float64, n.Elems())}
	dt := n.DType()
	for i := range a.Data {
		b := loadLE(n.Data[i*n.Size:], n.Size)
		if dt == asm.DTInvalid { // f8
			a.Data[i] = math.Float64frombits(b)
		} else {
			a.Data[i] = Decode(dt, b)
		}
	}
	return a
}

func validDescr(kind byte, size int) bool {
	switch kind {
	case 'f':
		return size == 2 || size == 4 || size == 8
	case 'i', 'u':
		return size == 1 || size == 2 || size == 4 || size == 8
	}
	return false
}

var npyMagic = []byte("\x93NUMPY")

// ReadNPY parses a .npy file (format versions 1.0, 2.0 and 3.0). Big-endian data
// is byte-swapped and Fortran-order data is transposed, so the result is always
// little-endian C order. bool ("|b1") reads as u1.
func ReadNPY(data []byte) (*NPY, error) {
	if len(data) < 10 || !bytes.Equal(data[:6], npyMagic) {
		return nil, errors.New("npy: not a .npy file (bad magic)")
	}
	major := data[6]
	var hlen, start int
	switch major {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(data[8:])), 10
	case 2, 3:
		if len(data) < 12 {
			return nil, errors.New("npy: truncated header")
		}
		h := binary.LittleEndian.Uint32(data[8:])
		if int64(h) > int64(len(data)) {
			return nil, errors.New("npy: truncated header")
		}
		hlen, start = int(h), 12
	default:
		return nil, fmt.Errorf("npy: unsupported format version %d.%d", major, data[7])
	}
	if hlen > len(data)-start {
		return nil, errors.New("npy: truncated header")
	}
	hdr, err := parseNPYHeader(string(data[start : start+hlen]))
	if err != nil {
		return nil, err
	}
	descr := hdr.descr
	if len(descr) < 3 {
		return nil, fmt.Errorf("npy: unsupported descr %q", descr)
	}
	order, kind := descr[0], descr[1]
	size, err := strconv.Atoi(descr[2:])
	if err != nil || (order != '<' && order != '>' && order != '|' && order != '=') {
		return nil, fmt.Errorf("npy: unsupported descr %q", descr)
	}
	if kind == 'b' && size == 1 {
		kind = 'u'
	}
	if !validDescr(kind, size) {
		return nil, fmt.Errorf("npy: unsupported descr %q (want f2 f4 f8 i1 u1 i2 u2 i4 u4 i8 u8)", descr)
	}
	count := int64(1)
	for _, d := range hdr.shape {
		if d < 0 || int64(d) > maxNPYElems || (d > 0 && count > maxNPYElems/int64(d)) {
			return nil, fmt.Errorf("npy: shape %v too large", hdr.shape)
		}
		count *= int64(d)
	}
	body := data[start+hlen:]
	if int64(len(body)) != count*int64(size) {
		return nil, fmt.Errorf("npy: shape %v of %s needs %d data bytes, file has %d", hdr.shape, descr, count*int64(size), len(body))
	}
	n := &NPY{Kind: kind, Size: size, Shape: hdr.shape, Data: append([]byte(nil), body...)}
	if order == '>' && size > 1 {
		for i := 0; i < len(n.Data); i += size {
			e := n.Data[i : i+size]
			for a, b := 0, size-1; a < b; a, b = a+1, b-1 {
				e[a], e[b] = e[b], e[a]
			}
		}
	}
	if hdr.fortran && len(n.Shape) > 1 {
		n.Data = fortranToC(n.Data, n.Shape, size)
	}
	return n, nil
}

// fortranToC reorders column-major (first index fastest) elements to row-major.
func fortranToC(src []byte, shape []int, size int) []byte {
	dst := make([]byte, len(src))
	rank := len(shape)
	fstride := make([]int, rank)
	s := 1
	for k := 0; k < rank; k++ {
		fstride[k] = s
		s *= shape[k]
	}
	idx := make([]int, rank)
	foff := 0
	for c := 0; c*size < len(dst); c++ {
		copy(dst[c*size:(c+1)*size], src[foff*size:(foff+1)*size])
		for k := rank - 1; k >= 0; k-- {
			idx[k]++
			foff += fstride[k]
			if idx[k] < shape[k] {
				break
			}
			foff -= idx[k] * fstride[k]
			idx[k] = 0
		}
	}
	return dst
}

type npyHeader struct {
	descr   string
	fortran bool
	shape   []int
}

// parseNPYHeader reads the Python dict literal of a .npy header.
func parseNPYHeader(h string) (npyHeader, error) {
	var out npyHeader
	p := &pyLexer{s: strings.TrimRight(h, " \n\x00")}
	bad := func(what string) (npyHeader, error) {
		return npyHeader{}, fmt.Errorf("npy: bad header %q: %s", clip(h, 80), what)
	}
	if !p.eat('{') {
		return bad("want {")
	}
	seen := map[string]bool{}
	for !p.eat('}') {
		key, ok := p.str()
		if !ok || !p.eat(':') {
			return bad("want 'key':")
		}
		switch key {
		case "descr":
			if out.descr, ok = p.str(); !ok {
				return bad("descr is not a string")
			}
		case "fortran_order":
			w := p.word()
			if w != "True" && w != "False" {
				return bad("fortran_order is not True or False")
			}
			out.fortran = w == "True"
		case "shape":
			if !p.eat('(') {
				return bad("shape is not a tuple")
			}
			out.shape = []int{}
			for !p.eat(')') {
				w := strings.TrimSuffix(p.word(), "L")
				d, err := strconv.Atoi(w)
				if err != nil || d < 0 {
					return bad("shape holds a non-integer")
				}
				out.shape = append(out.shape, d)
				if !p.eat(',') && p.peek() != ')' {
					return bad("want , or ) in shape")
				}
				if len(out.shape) > 32 {
					return bad("too many dimensions")
				}
			}
		default:
			return bad("unknown key " + key)
		}
		seen[key] = true
		if !p.eat(',') && p.peek() != '}' {
			return bad("want , or }")
		}
	}
	if !seen["descr"] || !seen["fortran_order"] || !seen["shape"] {
		return bad("missing descr, fortran_order or shape")
	}
	if p.skip(); p.i != len(p.s) {
		return bad("trailing text")
	}
	return out, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

type pyLexer struct {
	s string
	i int
}

func (p *pyLexer) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\n' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *pyLexer) peek() byte {
	p.skip()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *pyLexer) eat(c byte) bool {
	if p.peek() == c && c != 0 {
		p.i++
		return true
	}
	return false
}

func (p *pyLexer) str() (string, bool) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", false
	}
	j := strings.IndexByte(p.s[p.i+1:], q)
	if j < 0 {
		return "", false
	}
	s := p.s[p.i+1 : p.i+1+j]
	p.i += j + 2
	return s, true
}

func (p *pyLexer) word() string {
	p.skip()
	j := p.i
	for j < len(p.s) && (p.s[j] >= '0' && p.s[j] <= '9' || p.s[j] >= 'A' && p.s[j] <= 'z') {
		j++
	}
	w := p.s[p.i:j]
	p.i = j
	return w
}

// WriteNPY writes a version 1.0 (2.0 when the header needs it) .npy file of
// little-endian C-order data. kind/size are the numpy descr ('f', 4 for "<f4").
func WriteNPY(w io.Writer, kind byte, size int, shape []int, data []byte) error {
	if !validDescr(kind, size) {
		return fmt.Errorf("npy: cannot write %c%d", kind, size)
	}
	count := 1
	for _, d := range shape {
		count *= d
	}
	if count*size != len(data) {
		return fmt.Errorf("npy: shape %v of %c%d needs %d bytes, have %d", shape, kind, size, count*size, len(data))
	}
	order := "<"
	if size == 1 {
		order = "|"
	}
	var sh strings.Builder
	sh.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			sh.WriteString(", ")
		}
		sh.WriteString(strconv.Itoa(d))
	}
	if len(shape) == 1 {
		sh.WriteByte(',')
	}
	sh.WriteByte(')')
	dict := fmt.Sprintf("{'descr': '%s%c%d', 'fortran_order': False, 'shape': %s, }", order, kind, size, sh.String())
	pre := 10
	if len(dict)+pre+1 > 65535 {
		pre = 12
	}
	// Pad so the data starts on a 64-byte boundary, as numpy does.
	total := (pre + len(dict) + 1 + 63) / 64 * 64
	hdr := dict + strings.Repeat(" ", total-pre-len(dict)-1) + "\n"
	buf := make([]byte, 0, total)
	buf = append(buf, npyMagic...)
	if pre == 10 {
		buf = append(buf, 1, 0)
		buf = binary.LittleEndian.AppendUint16(buf, uint16(len(hdr)))
	} else {
		buf = append(buf, 2, 0)
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(hdr)))
	}
	buf = append(buf, hdr...)
	if _, err := w.Write(buf); err != nil {
		return err
	}
	_, err := w.Write(data)
	return err
}

// NPYKind is the numpy descr kind and size for dt; bf16 has none and writes as f4.
func NPYKind(dt asm.DType) (kind byte, size int) {
	switch dt {
	case asm.F16:
		return 'f', 2
	case asm.BF16, asm.F32:
		return 'f', 4
	case asm.I8, asm.I16, asm.I32, asm.I64:
		return 'i', dt.Size()
	case asm.U8, asm.U16, asm.U32, asm.U64:
		return 'u', dt.Size()
	}
	return 'f', 8
}

// WriteArrayNPY writes a as a .npy of dtype dt (bf16 is widened to f4; an
// invalid dtype writes f8), rounding to nearest even.
func WriteArrayNPY(w io.Writer, a *Array, dt asm.DType) error {
	kind, size := NPYKind(dt)
	data := make([]byte, len(a.Data)*size)
	for i, v := range a.Data {
		var bits uint64
		switch {
		case size == 8 && kind == 'f':
			bits = math.Float64bits(v)
		case dt == asm.BF16:
			bits = uint64(math.Float32bits(DecodeBF16(EncodeBF16(v, RoundRint))))
		default:
			bits = Encode(dt, v, RoundRint)
		}
		storeLE(data[i*size:], size, bits)
	}
	return WriteNPY(w, kind, size, a.Shape, data)
}

// ReadBinArray decodes a raw little-endian .bin file of dt elements (bf16
// included) as a 1-D Array.
func ReadBinArray(data []byte, dt asm.DType) (*Array, error) {
	sz := dt.Size()
	if sz == 0 {
		return nil, fmt.Errorf("bin: invalid dtype %v", dt)
	}
	if len(data)%sz != 0 {
		return nil, fmt.Errorf("bin: %d bytes is not a whole number of %v elements", len(data), dt)
	}
	n := len(data) / sz
	a := &Array{Shape: []int{n}, Data: make([]float64, n)}
	for i := range a.Data {
		a.Data[i] = Decode(dt, loadLE(data[i*sz:], sz))
	}
	return a, nil
}

// ReadDataFile decodes a data file's bytes by name: ".npy" parses the header,
// anything else is raw little-endian dt elements.
func ReadDataFile(name string, data []byte, dt asm.DType) (*Array, error) {
	if strings.HasSuffix(strings.ToLower(name), ".npy") {
		n, err := ReadNPY(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return n.Array(), nil
	}
	a, err := ReadBinArray(data, dt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return a, nil
}
