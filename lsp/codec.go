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
//
// A body that is not a JSON-RPC message inside intact framing does not break
// the stream: it is answered with the JSON-RPC error (parse error or invalid
// request) on out and the next message is read, so one bad message from a
// client's plugin does not end the editor's session (the library ends it).
type boundedCodec struct {
	jsonrpc2.VSCodeObjectCodec // writing is the library's
	max                        int64
	out                        jsonrpc2.ObjectStream // where rejections go; nil: nowhere

	mu  sync.Mutex
	err error
}

// maxHeaders is how many header lines a message may have: LSP defines two.
const maxHeaders = 16

// ReadObject reads one message into v, answering and skipping any before
// it whose body is not a message.
func (c *boundedCodec) ReadObject(r *bufio.Reader, v any) error {
	err := c.readMessage(r, v)
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

func (c *boundedCodec) readMessage(r *bufio.Reader, v any) error {
	for {
		body, err := c.readBody(r)
		if err != nil {
			return err
		}
		err = json.Unmarshal(body, v)
		if err == nil {
			return nil
		}
		if err := c.reject(body, err); err != nil {
			return err
		}
	}
}

// reject answers a body that is not a JSON-RPC message as JSON-RPC 2.0 says:
// a parse error if it is not JSON, else an invalid request, with the
// message's id when it has a usable one and null otherwise.
func (c *boundedCodec) reject(body []byte, cause error) error {
	e := &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidRequest, Message: "invalid request: " + cause.Error()}
	if !json.Valid(body) {
		e = &jsonrpc2.Error{Code: jsonrpc2.CodeParseError, Message: "parse error: " + cause.Error()}
	}
	if c.out == nil {
		return cause
	}
	return c.out.WriteObject(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc2.Error `json:"error"`
	}{"2.0", messageID(body), e})
}

// messageID is the id of a body that did not decode as a message, if it has
// one a reply can carry (a number or a string), else null.
func messageID(body []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	var id jsonrpc2.ID
	if json.Unmarshal(body, &m) != nil || m.ID == nil || json.Unmarshal(m.ID, &id) != nil {
		return json.RawMessage("null")
	}
	return m.ID
}

// readBody reads one message's framing and returns its body.
func (c *boundedCodec) readBody(r *bufio.Reader) ([]byte, error) {
	length := int64(-1)
	for n := 0; ; n++ {
		if n == maxHeaders {
			return nil, fmt.Errorf("more than %d header lines in a message", maxHeaders)
		}
		line, err := r.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			return nil, fmt.Errorf("a header line longer than %d bytes", r.Size())
		case err == io.EOF && n == 0 && len(line) == 0:
			return nil, io.EOF
		case err == io.EOF:
			return nil, io.ErrUnexpectedEOF
		case err != nil:
			return nil, err
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) == 0 {
			break
		}
		name, val, ok := strings.Cut(string(line), ":")
		if !ok {
			return nil, fmt.Errorf("header line %.40q is not NAME: VALUE", line)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			val = strings.TrimSpace(val)
			if length, err = strconv.ParseInt(val, 10, 64); err != nil || length < 0 {
				return nil, fmt.Errorf("Content-Length %.40q is not a byte count", val)
			}
			if length > c.max {
				return nil, fmt.Errorf("a message of %d bytes, larger than the %s limit on messages (64 x --max-file-size)", length, asm.FormatBytes(c.max))
			}
		}
	}
	if length < 0 {
		return nil, errors.New("a message without a Content-Length header")
	}
	// Read what arrives, not length bytes at once: a header that promises
	// more than the stream holds costs only what it sends.
	body, err := io.ReadAll(io.LimitReader(r, length))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) < length {
		return nil, io.ErrUnexpectedEOF
	}
	return body, nil
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
