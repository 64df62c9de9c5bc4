// Package citations checks that every "machine-facts §N", "kernels.md §N",
// "ptoas.md §N" or "peers.md §N" in the repository names a section of the
// corresponding file under docs/sources, so a comment's source can always be
// looked up in the repository itself.
package citations

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// cite matches a citation: the notes' name, then a section such as 4.5, 1(d)
// or 3 (which matches the heading "## 3.").
var cite = regexp.MustCompile(`\b(machine-facts|kernels|ptoas|peers)(?:\.md)?[ \x60]*§ ?([0-9]+(?:\.[0-9]+)?(?:\([a-z]\))?)`)

// heading gives a section's number: "### 4.5 Vector" → "4.5", "## 3. Ring" → "3".
var heading = regexp.MustCompile(`(?m)^#{2,3} ([0-9]+(?:\.[0-9]+)?(?:\([a-z]\))?)\.? `)

func TestCitationsResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	sections := map[string]map[string]bool{}
	for _, name := range []string{"machine-facts", "kernels", "ptoas", "peers"} {
		b, err := os.ReadFile(filepath.Join(root, "docs", "sources", name+".md"))
		if err != nil {
			t.Fatal(err)
		}
		sections[name] = map[string]bool{}
		for _, m := range heading.FindAllStringSubmatch(string(b), -1) {
			sections[name][m[1]] = true
		}
	}
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || path == filepath.Join(root, "docs", "sources") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".pto", ".txt", ".golden":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range cite.FindAllStringSubmatch(line, -1) {
				n++
				if !sections[m[1]][m[2]] {
					t.Errorf("%s:%d: %q cites a section docs/sources/%s.md does not have", path, i+1, m[0], m[1])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("found no citations: the pattern or the walk is broken")
	}
	t.Logf("%d citations checked", n)
}
