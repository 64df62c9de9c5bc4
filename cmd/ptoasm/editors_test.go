package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	protocol "github.com/tliron/glsp/protocol_3_16"
)

// TestEditorConfigs: the README's editor set-ups are the files under
// editors/, quoted verbatim, and each starts a working server: Helix's
// languages.toml (parsed as TOML) and the VS Code extension (extension.js
// loaded under node with VS Code stood in) name a command and arguments that,
// run, serve a program's diagnostics. Neovim's ptoasm.lua is run for real by
// TestNeovimSession.
func TestEditorConfigs(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"editors/nvim/ptoasm.lua", "editors/helix/languages.toml"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(readme), string(b)) {
			t.Errorf("README.md does not quote %s as it is", f)
		}
	}

	t.Run("helix", func(t *testing.T) {
		var cfg struct {
			LanguageServer map[string]struct {
				Command string
				Args    []string
			} `toml:"language-server"`
			Language []struct {
				Name            string
				Scope           string
				FileTypes       []string `toml:"file-types"`
				LanguageServers []string `toml:"language-servers"`
				CommentToken    string   `toml:"comment-token"`
			} `toml:"language"`
		}
		md, err := toml.DecodeFile(filepath.Join(root, "editors", "helix", "languages.toml"), &cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range md.Undecoded() {
			// Helix's own keys the test reads no further; any other is a typo.
			if k := k.String(); k != "language.roots" && k != "language.indent" && !strings.HasPrefix(k, "language.indent.") {
				t.Errorf("unknown key %s", k)
			}
		}
		if len(cfg.Language) != 1 || cfg.Language[0].Name != "pto" || !slices.Equal(cfg.Language[0].FileTypes, []string{"pto"}) || cfg.Language[0].CommentToken != "//" {
			t.Fatalf("[[language]]: %+v", cfg.Language)
		}
		for _, name := range cfg.Language[0].LanguageServers {
			ls, ok := cfg.LanguageServer[name]
			if !ok {
				t.Fatalf("language server %q is not defined", name)
			}
			checkServer(t, ls.Command, ls.Args)
		}
	})

	t.Run("vscode", func(t *testing.T) {
		node, err := exec.LookPath("node")
		if err != nil {
			t.Skip("node is not installed: the VS Code extension is not loaded (.ci/run installs Node)")
		}
		dir := filepath.Join(root, "editors", "vscode")
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "vscode-languageclient")); err != nil {
			t.Skip("editors/vscode/node_modules is missing: run `npm ci` there (.ci/run does)")
		}
		var pkg struct {
			Main        string
			Contributes struct {
				Languages []struct {
					ID            string
					Extensions    []string
					Configuration string
				}
				Grammars []struct {
					Language, ScopeName, Path string
				}
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err == nil {
			err = json.Unmarshal(b, &pkg)
		}
		if err != nil {
			t.Fatal(err)
		}
		c := pkg.Contributes
		if len(c.Languages) != 1 || c.Languages[0].ID != "pto" || !slices.Equal(c.Languages[0].Extensions, []string{".pto"}) ||
			len(c.Grammars) != 1 || c.Grammars[0].Language != "pto" || c.Grammars[0].ScopeName != "source.pto" {
			t.Fatalf("package.json contributes %+v", c)
		}
		for _, f := range []string{pkg.Main, c.Languages[0].Configuration, c.Grammars[0].Path} {
			var v any
			if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil {
				t.Errorf("package.json names %s: %v", f, err)
			} else if strings.HasSuffix(f, ".json") && json.Unmarshal(b, &v) != nil {
				t.Errorf("%s is not JSON", f)
			}
		}
		out, err := exec.Command(node, filepath.Join(dir, "test", "extension.test.js")).Output()
		if err != nil {
			t.Fatalf("extension.test.js: %v", err)
		}
		var rec struct {
			ServerOptions struct {
				Command string
				Args    []string
			}
			Started       bool
			Subscriptions int
		}
		if err := json.Unmarshal(out, &rec); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if !rec.Started || rec.Subscriptions != 1 {
			t.Errorf("the extension did not start its client: %s", out)
		}
		checkServer(t, rec.ServerOptions.Command, rec.ServerOptions.Args)
	})
}

// checkServer runs `command args...` (ptoasm: this test binary) as an
// editor would and wants a program's diagnostics and inlay hints from it.
func checkServer(t *testing.T, command string, args []string) {
	t.Helper()
	if command != "ptoasm" {
		t.Fatalf("command %q, want ptoasm (on PATH)", command)
	}
	cl, exited := startLSPProcess(t, args...)
	uri, text := programURI(t, "programs/vec_add/vec_add.pto")
	p := openWait(t, cl, uri, text)
	for _, d := range p.Diagnostics {
		if d.Severity != nil && *d.Severity <= protocol.DiagnosticSeverityWarning {
			t.Errorf("vec_add: %s", d.Message)
		}
	}
	var hints []struct{ Label string }
	if err := cl.Call("textDocument/inlayHint", map[string]any{"textDocument": map[string]string{"uri": uri},
		"range": protocol.Range{End: protocol.Position{Line: 1 << 20}}}, &hints); err != nil || len(hints) == 0 {
		t.Errorf("inlay hints: %v, %d", err, len(hints))
	}
	exitLSP(t, cl, exited)
}
