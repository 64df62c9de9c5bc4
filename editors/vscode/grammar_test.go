// Package vscode holds the VS Code extension for .pto files (package.json,
// extension.js, the TextMate grammar in syntaxes/); its Go tests keep the
// grammar's mnemonics in step with the ISA table and run the grammar's
// Node test on every shipped program.
package vscode

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

const grammarFile = "syntaxes/pto.tmLanguage.json"

// instructionRule is the grammar's match for a statement that starts with
// an instruction: an optional label, an optional result (`%d = `), an
// optional `pto.` prefix, then a mnemonic or alias of the ISA table.
func instructionRule() string {
	var names []string
	for _, op := range asm.ISA {
		names = append(names, op.Name)
		names = append(names, op.Aliases...)
	}
	// Longest first, so tmatmul.acc is tried before tmatmul.
	sort.Slice(names, func(i, j int) bool {
		if len(names[i]) != len(names[j]) {
			return len(names[i]) > len(names[j])
		}
		return names[i] < names[j]
	})
	for i, n := range names {
		names[i] = regexp.QuoteMeta(n)
	}
	return `^\s*(?:([A-Za-z_]\w*)(:)\s+)?(?:(%[A-Za-z_]\w*)\s*(=)\s*)?((?:pto\.)?(?:` + strings.Join(names, "|") + `))(?![\w.])`
}

// TestGrammarMnemonics: the grammar knows exactly the ISA table's
// mnemonics; UPDATE_GOLDEN=1 rewrites its rule from the table.
func TestGrammarMnemonics(t *testing.T) {
	b, err := os.ReadFile(grammarFile)
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Repository map[string]struct {
			Match string `json:"match"`
		} `json:"repository"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", grammarFile, err)
	}
	want := instructionRule()
	if got := g.Repository["instruction"].Match; got == want {
		return
	}
	if os.Getenv("UPDATE_GOLDEN") == "" {
		t.Fatalf("%s: the instruction rule is not the ISA table's mnemonics (UPDATE_GOLDEN=1 rewrites it)", grammarFile)
	}
	// Replace the one match string in place, keeping the file's layout.
	old, _ := json.Marshal(g.Repository["instruction"].Match)
	repl, _ := json.Marshal(want)
	old = bytes.ReplaceAll(old, []byte(`\u003c`), []byte("<"))
	repl = bytes.ReplaceAll(repl, []byte(`\u003c`), []byte("<"))
	nb := bytes.Replace(b, append([]byte(`"match": `), old...), append([]byte(`"match": `), repl...), 1)
	if bytes.Equal(nb, b) {
		t.Fatal("could not find the instruction rule to rewrite")
	}
	if err := os.WriteFile(grammarFile, nb, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGrammar runs test/grammar.test.js (vscode-textmate, the engine VS Code
// highlights with) on every program under programs/ and the MLIR samples.
func TestGrammar(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the TextMate grammar is not tested (.ci/run installs Node and runs npm ci in editors/vscode)")
	}
	if _, err := os.Stat(filepath.Join("node_modules", "vscode-textmate")); err != nil {
		t.Skip("editors/vscode/node_modules is missing: run `npm ci` in editors/vscode (.ci/run does) to test the TextMate grammar")
	}
	// Read what node reads, so that go test's cache sees a change to them.
	for _, f := range []string{grammarFile, filepath.Join("test", "grammar.test.js")} {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	err = filepath.WalkDir(filepath.Join(root, "programs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".pto") {
			files = append(files, p)
			_, err = os.ReadFile(p) // for the cache, as above
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("no programs found: %v", err)
	}
	mlir, _ := filepath.Glob(filepath.Join(root, "cmd", "ptoasm", "testdata", "*mlir*.pto"))
	files = append(files, mlir...)
	out, err := exec.Command(node, append([]string{filepath.Join("test", "grammar.test.js"), root}, files...)...).CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("grammar test: %v", err)
	}
}
