package lsp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/parser/mlir"
)

// Options configures a Server. The zero value serves assembler diagnostics
// only, parsing with DefaultParseFile.
type Options struct {
	// ParseFile parses one source file; nil means DefaultParseFile. The
	// command passes its own frontend so editor and CLI agree.
	ParseFile func(name string, src []byte) (*asm.File, asm.ErrorList)
	// Lint finds hazards in an assembled program; nil means no lint. It is
	// called with at most one call per document at a time; ctx is cancelled
	// when a newer edit of the document arrives, and a result that comes
	// back after that is dropped.
	Lint func(ctx context.Context, obj *asm.Object) ([]hazard.Finding, error)
	// Debounce is how long an edit waits for the next before the document
	// is analysed; 0 means DefaultDebounce.
	Debounce time.Duration
	// MaxFileSize bounds an include read from disk (the open documents are
	// what the editor holds; one larger is not analysed) and, 64 times
	// over, one message from the client; 0 means 1 MiB, the CLI's default.
	MaxFileSize int64
	// Version is reported in the initialize result.
	Version string
	// Defines are -D overrides of constants, for `ptoasm lint --fix -D`;
	// the editor serves the file as written.
	Defines []asm.Define
}

// DefaultDebounce lets a burst of keystrokes become one analysis.
const DefaultDebounce = 150 * time.Millisecond

// DefaultParseFile reads PTO-AS, or PTOAS MLIR lowered to PTO-AS, told apart
// by content as the command line does.
func DefaultParseFile(name string, src []byte) (*asm.File, asm.ErrorList) {
	if mlir.IsMLIR(src) {
		return mlir.ParseFile(name, src)
	}
	return parser.ParseFile(name, src)
}

// Server is one language-server session.
type Server struct {
	opt     Options
	handler protocol.Handler

	mu   sync.Mutex
	conn *jsonrpc2.Conn
	docs map[string]*document // by URI

	exit     chan struct{} // closed by the exit notification
	exitOnce sync.Once
	// shutdown records the shutdown request: an exit without one ends the
	// session with ErrExitWithoutShutdown (LSP 3.17, "exit": status 1).
	shutdown atomic.Bool

	// afterConnect, if set, runs in Serve once the connection reads:
	// a test delays Serve's goroutine there.
	afterConnect func()
}

// document is an open file and the state of its analysis.
type document struct {
	uri  string
	path string // file name the assembler sees (and diagnostics name)

	// Guarded by Server.mu.
	text []byte
	// tooLarge is the size of the editor's text when it is over
	// Options.MaxFileSize (0: text holds it). Such a text is not kept: it
	// is not analysed, and a client that sends range edits of it anyway
	// must not make each 100-byte edit copy and scan 50 MB.
	tooLarge int64
	version  int32
	gen      int // bumped by every edit; an analysis of an older gen is stale
	timer    *time.Timer
	edited   time.Time // when the last edit arrived
	running  bool      // an analysis goroutine is working on this document
	pending  bool      // an edit arrived while it ran: analyse again when it ends
	// published is the gen of the analysis last published: a timer armed
	// by an edit whose text an analysis already took (it reads the latest
	// text when it starts, not its timer's) asks for nothing new.
	published int
	cancel    context.CancelFunc
	closed    bool

	// The latest analysis, for hover, definition and symbols.
	res *result
}

// result is what one analysis of one version of a document found.
type result struct {
	text []byte
	file *asm.File   // the parsed main file; nil if it did not parse
	obj  *asm.Object // nil if it did not assemble
	// names is obj, or while the text does not assemble the last object
	// that did: completion offers its tiles and tensors mid-edit.
	names *asm.Object
	fixes []flagFix // quick fixes of the lint findings
	diags []protocol.Diagnostic
}

// New returns a server with options opt.
func New(opt Options) *Server {
	if opt.ParseFile == nil {
		opt.ParseFile = DefaultParseFile
	}
	if opt.Debounce <= 0 {
		opt.Debounce = DefaultDebounce
	}
	if opt.MaxFileSize <= 0 {
		opt.MaxFileSize = 1 << 20
	}
	s := &Server{opt: opt, docs: map[string]*document{}, exit: make(chan struct{})}
	s.handler = protocol.Handler{
		Initialize:                     s.initialize,
		Initialized:                    func(*glsp.Context, *protocol.InitializedParams) error { return nil },
		Shutdown:                       func(*glsp.Context) error { s.shutdown.Store(true); return nil },
		SetTrace:                       func(*glsp.Context, *protocol.SetTraceParams) error { return nil },
		TextDocumentDidOpen:            s.didOpen,
		TextDocumentDidChange:          s.didChange,
		TextDocumentDidClose:           s.didClose,
		TextDocumentHover:              s.hover,
		TextDocumentDefinition:         s.definition,
		TextDocumentDocumentSymbol:     s.documentSymbol,
		TextDocumentFormatting:         s.formatting,
		TextDocumentCompletion:         s.completion,
		TextDocumentReferences:         s.references,
		TextDocumentRename:             s.rename,
		TextDocumentSemanticTokensFull: s.semanticTokens,
		TextDocumentCodeAction:         s.codeAction,
	}
	return s
}

// ErrExitWithoutShutdown is Serve's error when the client sent exit
// without a shutdown request first: the specification asks for exit
// status 1 then (LSP 3.17, "exit"), 0 after a shutdown.
var ErrExitWithoutShutdown = errors.New("lsp: exit without a shutdown request")

// Serve speaks LSP over rw until the client disconnects or ctx ends. A
// stream that breaks (a malformed or oversized message) is an error, and
// so is an exit without a shutdown (ErrExitWithoutShutdown).
func (s *Server) Serve(ctx context.Context, rw io.ReadWriteCloser) error {
	h := jsonrpc2.HandlerWithError(s.handle)
	// The connection reads and handles requests from here on; s.conn is
	// set by the first request's handling (s.handle), not after NewConn
	// returns, or a document opened and analysed before this goroutine ran
	// again would publish to no one.
	codec := &boundedCodec{max: messageLimit(s.opt.MaxFileSize)}
	stream := jsonrpc2.NewBufferedStream(rw, codec)
	codec.out = stream
	conn := jsonrpc2.NewConn(ctx, stream, h, jsonrpc2.SetLogger(connLogger{}))
	if s.afterConnect != nil {
		s.afterConnect()
	}
	// exit ends the session even while a read of the stream blocks (stdin
	// stays open when the editor sends exit and waits for us to go).
	var err error
	select {
	case <-conn.DisconnectNotify():
		if cause := codec.failure(); cause != nil {
			err = fmt.Errorf("lsp: reading the client's messages: %v", cause)
		}
	case <-s.exit:
		conn.Close()
		if !s.shutdown.Load() {
			err = ErrExitWithoutShutdown
		}
	case <-ctx.Done():
		conn.Close()
	}
	s.mu.Lock()
	for _, d := range s.docs {
		d.stop()
	}
	s.mu.Unlock()
	return err
}

// messageLimit is the most one message may hold: 64 file sizes (a document
// JSON-escaped, with room), saturating (64 times a --max-file-size of 2^57
// or more wrapped to a limit of 0 or below, which refused every message).
func messageLimit(maxFileSize int64) int64 {
	return asm.ScaledLimit(maxFileSize, 64)
}

// handle adapts a JSON-RPC request to glsp's dispatch, as glsp's own server
// does; it is ours so the stream can be any io.ReadWriteCloser (a test's
// pipe as well as stdio).
func (s *Server) handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (_ any, err error) {
	defer func() {
		// A bug in one request must not end the editor's session.
		if r := recover(); r != nil {
			err = &jsonrpc2.Error{Code: jsonrpc2.CodeInternalError, Message: fmt.Sprintf("%s: internal error: %v", req.Method, r)}
		}
	}()
	s.mu.Lock()
	s.conn = conn
	s.mu.Unlock()
	gctx := glsp.Context{
		Method: req.Method,
		Notify: func(method string, params any) { conn.Notify(ctx, method, params) },
		Call:   func(method string, params, result any) { conn.Call(ctx, method, params, result) },
	}
	if req.Params != nil {
		gctx.Params = *req.Params
	}
	switch req.Method {
	case "exit":
		s.exitOnce.Do(func() { close(s.exit) })
		return nil, nil
	case methodInlayHint:
		r, err := s.inlayHintRequest(req.Params)
		if err != nil {
			return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: err.Error()}
		}
		return r, nil
	}
	r, validMethod, validParams, err := s.handler.Handle(&gctx)
	switch {
	case !validMethod:
		if req.Notif || strings.HasPrefix(req.Method, "$/") {
			return nil, nil // notifications we do not serve are ignored
		}
		return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "method not supported: " + req.Method}
	case !validParams:
		msg := "invalid params"
		if err != nil {
			msg = err.Error()
		}
		return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: msg}
	case err != nil:
		return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidRequest, Message: err.Error()}
	}
	return r, nil
}

func (s *Server) initialize(_ *glsp.Context, _ *protocol.InitializeParams) (any, error) {
	caps := s.handler.CreateServerCapabilities()
	caps.TextDocumentSync = protocol.TextDocumentSyncOptions{
		OpenClose: ptr(true),
		Change:    ptr(protocol.TextDocumentSyncKindFull),
	}
	caps.CompletionProvider = &protocol.CompletionOptions{TriggerCharacters: []string{"%", "@"}}
	caps.SemanticTokensProvider = semanticTokensOptions()
	ver := s.opt.Version
	return struct {
		Capabilities serverCapabilities                   `json:"capabilities"`
		ServerInfo   *protocol.InitializeResultServerInfo `json:"serverInfo,omitempty"`
	}{
		Capabilities: serverCapabilities{ServerCapabilities: caps, InlayHintProvider: true},
		ServerInfo:   &protocol.InitializeResultServerInfo{Name: "ptoasm", Version: &ver},
	}, nil
}

func ptr[T any](v T) *T { return &v }

// uriPath turns a file: URI into the path the assembler reads includes
// relative to; any other URI is used as the name as it is.
func uriPath(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return uri
	}
	return filepath.FromSlash(u.Path)
}

func (s *Server) didOpen(_ *glsp.Context, p *protocol.DidOpenTextDocumentParams) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := &document{uri: p.TextDocument.URI, path: uriPath(p.TextDocument.URI)}
	if old := s.docs[d.uri]; old != nil {
		old.stop()
	}
	s.docs[d.uri] = d
	s.setWhole(d, p.TextDocument.Text)
	d.version = p.TextDocument.Version
	s.scheduleLocked(d)
	return nil
}

func (s *Server) didChange(_ *glsp.Context, p *protocol.DidChangeTextDocumentParams) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.docs[p.TextDocument.URI]
	if d == nil {
		return fmt.Errorf("%s: changed but not open", p.TextDocument.URI)
	}
	// The text before this message may be read by an analysis (it took
	// it under s.mu); a text made while handling it is this message's
	// own, so the message's later range edits may change it in place.
	own := false
	for _, c := range p.ContentChanges {
		switch c := c.(type) {
		case protocol.TextDocumentContentChangeEventWhole:
			s.setWhole(d, c.Text)
		case protocol.TextDocumentContentChangeEvent:
			// We ask for full sync; a client that sends ranges anyway
			// gets them applied.
			if c.Range == nil {
				s.setWhole(d, c.Text)
			} else {
				s.applyRange(d, *c.Range, c.Text, own)
			}
		}
		own = true
	}
	d.version = p.TextDocument.Version
	s.scheduleLocked(d)
	return nil
}

// setWhole makes text, sent whole by the editor, d's text; one over the
// limit is noted by its size and not kept.
func (s *Server) setWhole(d *document, text string) {
	if d.tooLarge = s.overLimit(len(text)); d.tooLarge > 0 {
		d.text = nil
		return
	}
	d.text = []byte(text)
}

// overLimit is n if a text of n bytes is over Options.MaxFileSize, else 0.
func (s *Server) overLimit(n int) int64 {
	if int64(n) > s.opt.MaxFileSize {
		return int64(n)
	}
	return 0
}

// applyRange replaces the text in r with text. Unless own (d.text is no
// one else's), the result is a new slice: a running analysis still reads
// the old one; an own text is edited in place, so a message of 10^5 range
// edits moves bytes rather than allocating 10^5 copies (62 s and 400 MB of
// a 1 MiB document before). A document over the limit has no text to edit;
// it stays over the limit until the editor sends it whole (as full sync,
// which we ask for, always does).
func (s *Server) applyRange(d *document, r protocol.Range, text string, own bool) {
	if d.tooLarge > 0 {
		return
	}
	lo, hi := offsetOf(d.text, r.Start), offsetOf(d.text, r.End)
	if hi < lo {
		lo, hi = hi, lo
	}
	n := lo + len(text) + len(d.text) - hi
	if d.tooLarge = s.overLimit(n); d.tooLarge > 0 {
		d.text = nil
		return
	}
	if !own || n > cap(d.text) {
		// Room for the message's later edits to grow it in place.
		d.text = append(append(append(make([]byte, 0, n+n/8), d.text[:lo]...), text...), d.text[hi:]...)
		return
	}
	old := d.text
	d.text = d.text[:n]
	copy(d.text[lo+len(text):], old[hi:]) // copy moves overlapping bytes right
	copy(d.text[lo:], text)
}

func (s *Server) didClose(_ *glsp.Context, p *protocol.DidCloseTextDocumentParams) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.docs[p.TextDocument.URI]; d != nil {
		d.stop()
		delete(s.docs, d.uri)
	}
	s.notify(protocol.ServerTextDocumentPublishDiagnostics, protocol.PublishDiagnosticsParams{
		URI: p.TextDocument.URI, Diagnostics: []protocol.Diagnostic{},
	})
	return nil
}

// stop ends d's pending and running work; the caller holds Server.mu.
func (d *document) stop() {
	d.closed = true
	d.gen++
	if d.timer != nil {
		d.timer.Stop()
	}
	if d.cancel != nil {
		d.cancel()
	}
}

// scheduleLocked notes an edit of d: the running analysis (if any) is
// cancelled and its result will be dropped, and a new one starts at once
// when the edit comes after a pause of Options.Debounce or more (opening a
// file, a paste, a code action: the diagnostics follow in the time one
// analysis takes), else once the edits pause for Options.Debounce (typing:
// one analysis per burst). The caller holds Server.mu.
func (s *Server) scheduleLocked(d *document) {
	d.gen++
	if d.cancel != nil {
		d.cancel()
	}
	if d.timer != nil {
		d.timer.Stop()
	}
	now := time.Now()
	delay := s.opt.Debounce
	if now.Sub(d.edited) >= s.opt.Debounce {
		delay = 0
	}
	d.edited = now
	d.timer = time.AfterFunc(delay, func() { s.kick(d) })
}

// kick starts d's analysis unless one is running; then that one analyses
// again when it ends, so there is never more than one per document.
func (s *Server) kick(d *document) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.closed || d.gen == d.published {
		return
	}
	if d.running {
		d.pending = true
		return
	}
	d.running = true
	go s.work(d)
}

// work analyses d until no edit is pending, publishing each result that is
// still current when it is ready.
func (s *Server) work(d *document) {
	for {
		s.mu.Lock()
		if d.closed {
			d.running = false
			s.mu.Unlock()
			return
		}
		text, tooLarge, version, gen := d.text, d.tooLarge, d.version, d.gen
		ctx, cancel := context.WithCancel(context.Background())
		d.cancel = cancel
		s.mu.Unlock()

		// One publication per analysed version, assembler diagnostics
		// first, then the lint's: a client can tell when a version is done.
		res := s.analyze(ctx, d, text, tooLarge)
		cancel()
		s.publishIfCurrent(d, gen, version, res)

		s.mu.Lock()
		// A kick that came while this analysis ran asks for nothing new
		// when no edit came after the text it took.
		if d.pending && !d.closed && d.gen != gen {
			d.pending = false
			s.mu.Unlock()
			continue
		}
		d.pending = false
		d.running = false
		s.mu.Unlock()
		return
	}
}

// publishIfCurrent sends r's diagnostics and keeps r for queries, unless a
// newer edit made it stale.
func (s *Server) publishIfCurrent(d *document, gen int, version int32, r *result) {
	if r == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.gen != gen || d.closed {
		return
	}
	r.names = r.obj
	if r.names == nil && d.res != nil {
		r.names = d.res.names
	}
	d.res = r
	d.published = gen
	v := protocol.UInteger(version)
	s.notify(protocol.ServerTextDocumentPublishDiagnostics, protocol.PublishDiagnosticsParams{
		URI: d.uri, Version: &v, Diagnostics: r.diags,
	})
}

func (s *Server) notify(method string, params any) {
	if s.conn != nil {
		s.conn.Notify(context.Background(), method, params)
	}
}

// latest returns the document's text and latest analysis, or nil.
func (s *Server) latest(uri string) *result {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.docs[uri]; d != nil {
		return d.res
	}
	return nil
}

// readInclude reads an included file: an open document's text if the editor
// has it, else the file on disk, bounded like the CLI's reads.
func (s *Server) readInclude(name string) ([]byte, error) {
	s.mu.Lock()
	for _, d := range s.docs {
		if d.path == name {
			b, tooLarge := d.text, d.tooLarge
			s.mu.Unlock()
			if tooLarge > 0 {
				return nil, &asm.FileLimitError{Path: name, Limit: s.opt.MaxFileSize, Flag: "--max-file-size"}
			}
			return b, nil
		}
	}
	s.mu.Unlock()
	if ok, err := asm.IsRegularFile(name); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("not a regular file")
	}
	return asm.ReadFileLimit(name, s.opt.MaxFileSize, "--max-file-size")
}
