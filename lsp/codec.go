package lsp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"strconv"
	"strings"
	"sync"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/ptoasm/ptoasm/asm"
)

// boundedCodec is jsonrpc2's VSCodeObjectCodec (Content-Length framing)
// with bounds on what one message may make the server hold: the library
// reads a header line until its '\r' however long it is (300 MB without
// one took 600 MB and ended in exit 0, silently) and a body of up to 4 GiB.
// Header lines end at the stream's buffer (4 KiB) and a body at max bytes.
// The first read error other than the end of the stream is kept for Serve,
// which returns it, so a broken stream is an error, not exit 0.
type boundedCodec struct {
	jsonrpc2.VSCodeObjectCodec // writing is the library's
	max                        int64

	mu  sync.Mutex
	err error
}

// maxHeaders is how many header lines a message may have: LSP defines two.
const maxHeaders = 16

// ReadObject reads one message into v.
func (c *boundedCodec) ReadObject(r *bufio.Reader, v any) error {
	err := c.read(r, v)
	if err != nil && err != io.EOF {
		c.mu.Lock()
		if c.err == nil {
			c.err = err
		}
		c.mu.Unlock()
	}
	return err
}

// failure is the error that broke the stream, if any.
func (c *boundedCodec) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *boundedCodec) read(r *bufio.Reader, v any) error {
	length := int64(-1)
	for n := 0; ; n++ {
		if n == maxHeaders {
			return fmt.Errorf("more than %d header lines in a message", maxHeaders)
		}
		line, err := r.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			return fmt.Errorf("a header line longer than %d bytes", r.Size())
		case err == io.EOF && n == 0 && len(line) == 0:
			return io.EOF
		case err == io.EOF:
			return io.ErrUnexpectedEOF
		case err != nil:
			return err
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) == 0 {
			break
		}
		name, val, ok := strings.Cut(string(line), ":")
		if !ok {
			return fmt.Errorf("header line %.40q is not NAME: VALUE", line)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			val = strings.TrimSpace(val)
			if length, err = strconv.ParseInt(val, 10, 64); err != nil || length < 0 {
				return fmt.Errorf("Content-Length %.40q is not a byte count", val)
			}
			if length > c.max {
				return fmt.Errorf("a message of %d bytes, larger than the %s limit on messages (64 x --max-file-size)", length, asm.FormatBytes(c.max))
			}
		}
	}
	if length < 0 {
		return errors.New("a message without a Content-Length header")
	}
	// Read what arrives, not length bytes at once: a header that promises
	// more than the stream holds costs only what it sends.
	body, err := io.ReadAll(io.LimitReader(r, length))
	if err != nil {
		return err
	}
	if int64(len(body)) < length {
		return io.ErrUnexpectedEOF
	}
	return json.Unmarshal(body, v)
}

// connLogger is the connection's logger: jsonrpc2 logs the error that
// broke the stream, which Serve returns instead; anything else it logs goes
// to the standard logger.
type connLogger struct{}

func (connLogger) Printf(format string, v ...any) {
	if strings.HasPrefix(format, "jsonrpc2: protocol error") {
		return
	}
	log.Printf(format, v...)
}
