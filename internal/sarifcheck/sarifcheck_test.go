package sarifcheck

import (
	"strings"
	"testing"
)

// The shape ptoasm wrote before: a relative helpUri, rules without
// fullDescription or help, the version folded into the tool name.
const oldLog = `{
  "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
  "version": "2.1.0",
  "runs": [{
    "tool": {"driver": {"name": "ptoasm dev", "rules": [
      {"id": "WAR", "shortDescription": {"text": "write after read"}, "helpUri": "docs/hazards.md"}
    ]}},
    "results": [{
      "ruleId": "WAR", "ruleIndex": 0, "level": "error", "message": {"text": "race"},
      "locations": [{"physicalLocation": {"artifactLocation": {"uri": "t.pto"}, "region": {"startLine": 2, "startColumn": 5}}}]
    }]
  }]
}`

const goodLog = `{
  "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
  "version": "2.1.0",
  "runs": [{
    "tool": {"driver": {"name": "ptoasm", "version": "1.2.3", "rules": [
      {"id": "WAR", "shortDescription": {"text": "write after read"}, "fullDescription": {"text": "A write after a read."},
       "help": {"text": "Order them."}, "helpUri": "https://example.org/docs/hazards.md#war"}
    ]}},
    "results": [{
      "ruleId": "WAR", "ruleIndex": 0, "level": "error", "message": {"text": "race"},
      "locations": [{"physicalLocation": {"artifactLocation": {"uri": "t.pto"}, "region": {"startLine": 2, "startColumn": 5}}}],
      "partialFingerprints": {"primaryLocationLineHash": "WAR:t.pto:2"}
    }]
  }]
}`

func TestValidate(t *testing.T) {
	if err := Validate([]byte(goodLog)); err != nil {
		t.Errorf("a good log fails: %v", err)
	}
	if err := Schema([]byte(oldLog)); err == nil || !strings.Contains(err.Error(), "helpUri") {
		t.Errorf("the schema passes a relative helpUri: %v", err)
	}
	err := GitHub([]byte(oldLog))
	for _, want := range []string{"fullDescription", "help.text", "tool.driver.version", "not an absolute URI", "partialFingerprints"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("GitHub rules miss %q: %v", want, err)
		}
	}
	bad := strings.Replace(goodLog, `"ruleId": "WAR"`, `"ruleId": "RAW"`, 1)
	if err := GitHub([]byte(bad)); err == nil || !strings.Contains(err.Error(), "names no rule") {
		t.Errorf("a result naming no rule passes: %v", err)
	}
	bad = strings.Replace(goodLog, `"startLine": 2`, `"startLine": 0`, 1)
	if err := Schema([]byte(bad)); err == nil {
		t.Error("the schema passes startLine 0")
	}
}
