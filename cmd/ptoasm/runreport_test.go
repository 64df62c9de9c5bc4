package main

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ptoasm/ptoasm/machine/report"
)

const runReportSchema = "../../docs/run-report.schema.json"

// checkRunReport validates a run's JSON report against
// docs/run-report.schema.json (JSON Schema 2020-12).
func checkRunReport(doc []byte) error {
	c := jsonschema.NewCompiler()
	sch, err := c.Compile(runReportSchema)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

func validateRunReport(t *testing.T, doc []byte) {
	t.Helper()
	if err := checkRunReport(doc); err != nil {
		t.Errorf("run report does not follow %s: %v", runReportSchema, err)
	}
}

// TestRunReportSchema: the JSON report of runs of every shape (one core,
// many ranks with links and modes, timing-only without stats, a fault, a
// failed check) follows its schema, and carries the schema's version.
func TestRunReportSchema(t *testing.T) {
	for _, args := range [][]string{
		{"gemm_db"},
		{"allgather_gemm"},
		{"allgather_gemm", "--timing-only"},
		{"allreduce_ring/ring_final"},
		{"softmax", "--stats=off"},
		{"hazards/out_of_bounds"},
		{"hazards/deadlock"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, out, errOut := runCLI(append([]string{"run", "--format", "json"}, args...)...)
			if out == "" {
				t.Fatalf("no report; stderr: %s", errOut)
			}
			validateRunReport(t, []byte(out))
			if !strings.Contains(out, `"schema_version": 2,`) {
				t.Error("no schema_version")
			}
		})
	}
	// The schema is strict: a report with a field it does not know fails.
	_, out, _ := runCLI("run", "--format", "json", "vec_add")
	bad := strings.Replace(out, `"cycles":`, `"cycels": 1, "cycles":`, 1)
	if checkRunReport([]byte(bad)) == nil {
		t.Error("a misspelt field passes the schema")
	}
}

// TestRunReportTables: the 8-rank report's tables hold what the issue asks
// for, and the default text stays short.
func TestRunReportTables(t *testing.T) {
	if testing.Short() {
		t.Skip("an 8-rank run")
	}
	args := []string{"run", "allgather_gemm", "-D", "RANKS=8", "-D", "M=2048", "-D", "N=2048", "-D", "K=1024", "--timing-only", "--stats=on"}
	code, text, errOut := runCLI(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"pipes (over every core of a kind", "bandwidth (GB/s", "links (bytes from", "bus bandwidth (nccl-tests",
		"hotspots (source lines", "kernels (roofline", "modes", "speed-up"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q", want)
		}
	}
	if n := strings.Count(text, "\n"); n > 200 {
		t.Errorf("default text report is %d lines", n)
	}
	_, detail, _ := runCLI(append(args, "--detail")...)
	if !strings.Contains(detail, "pipes of every core:") || strings.Count(detail, "\n") <= strings.Count(text, "\n") {
		t.Error("--detail adds no per-core table")
	}
	// Every table as CSV: a header and rows of its width.
	for _, table := range report.Tables {
		_, out, errOut := runCLI(append(args, "--format", "csv", "--table", table)...)
		rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(rows) < 2 {
			t.Errorf("--table %s: %v, %d rows\n%s%s", table, err, len(rows), out, errOut)
		}
	}
	if code, _, errOut := runCLI(append(args, "--format", "csv", "--table", "nope")...); code != 2 || !strings.Contains(errOut, "--table nope") {
		t.Errorf("bad --table: exit %d, %s", code, errOut)
	}
}
