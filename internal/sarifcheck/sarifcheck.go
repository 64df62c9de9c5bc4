// Package sarifcheck validates SARIF logs for tests: against the official
// SARIF 2.1.0 JSON schema (vendored in testdata, with format assertions on, so
// a relative URI where the schema wants a "uri" fails) and against what GitHub
// code scanning requires of an upload beyond the schema.
package sarifcheck

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed testdata/sarif-schema-2.1.0.json
var schemaJSON []byte

const schemaID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schemaID, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaID)
})

// Schema validates data against the SARIF 2.1.0 schema.
func Schema(data []byte) error {
	sch, err := compiled()
	if err != nil {
		return fmt.Errorf("compiling the SARIF schema: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// GitHub's limits for one upload (docs.github.com, "SARIF support for code
// scanning": runs per file, results per run, locations per result, tags per
// rule).
const (
	maxRuns      = 20
	maxResults   = 25000
	maxLocations = 1000
	maxTags      = 20
)

type message struct {
	Text string `json:"text"`
}

type location struct {
	ID               *int `json:"id"`
	PhysicalLocation *struct {
		ArtifactLocation *struct {
			URI string `json:"uri"`
		} `json:"artifactLocation"`
		Region *struct {
			StartLine int `json:"startLine"`
		} `json:"region"`
	} `json:"physicalLocation"`
}

type log struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name    string `json:"name"`
				Version string `json:"version"`
				Rules   []struct {
					ID               string   `json:"id"`
					ShortDescription *message `json:"shortDescription"`
					FullDescription  *message `json:"fullDescription"`
					Help             *message `json:"help"`
					HelpURI          string   `json:"helpUri"`
					Properties       struct {
						Tags []string `json:"tags"`
					} `json:"properties"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID              string            `json:"ruleId"`
			RuleIndex           *int              `json:"ruleIndex"`
			Message             *message          `json:"message"`
			Locations           []location        `json:"locations"`
			RelatedLocations    []location        `json:"relatedLocations"`
			PartialFingerprints map[string]string `json:"partialFingerprints"`
		} `json:"results"`
	} `json:"runs"`
}

// GitHub checks what code scanning needs to show a log's results as alerts:
// version 2.1.0; a driver name without the version folded in, the version in
// its own field; rules with an id, short and full descriptions, help text and
// an absolute helpUri; results that name a rule of the run, carry a message,
// one or more locations with a relative or absolute artifact URI and a line,
// and partialFingerprints; related locations with ids; and the upload limits.
func GitHub(data []byte) error {
	var l log
	dec := jsonDecoder(data)
	if err := dec.Decode(&l); err != nil {
		return err
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if l.Version != "2.1.0" {
		bad("version %q, want 2.1.0", l.Version)
	}
	if l.Schema == "" {
		bad("no $schema")
	}
	if len(l.Runs) == 0 || len(l.Runs) > maxRuns {
		bad("%d runs, want 1..%d", len(l.Runs), maxRuns)
	}
	for ri, run := range l.Runs {
		d := run.Tool.Driver
		if d.Name == "" {
			bad("run %d: no tool.driver.name", ri)
		}
		if d.Version == "" {
			bad("run %d: no tool.driver.version", ri)
		} else if strings.Contains(d.Name, d.Version) || strings.ContainsAny(d.Name, " \t") {
			bad("run %d: the driver name %q holds more than the tool's name (the version goes in tool.driver.version)", ri, d.Name)
		}
		ids := map[string]int{}
		for i, r := range d.Rules {
			where := fmt.Sprintf("run %d rule %d (%s)", ri, i, r.ID)
			if r.ID == "" {
				bad("%s: no id", where)
			}
			if _, dup := ids[r.ID]; dup {
				bad("%s: duplicate id", where)
			}
			ids[r.ID] = i
			if r.ShortDescription == nil || r.ShortDescription.Text == "" {
				bad("%s: no shortDescription.text", where)
			}
			if r.FullDescription == nil || r.FullDescription.Text == "" {
				bad("%s: no fullDescription.text", where)
			}
			if r.Help == nil || r.Help.Text == "" {
				bad("%s: no help.text", where)
			}
			if u, err := url.Parse(r.HelpURI); err != nil || !u.IsAbs() || u.Host == "" {
				bad("%s: helpUri %q is not an absolute URI", where, r.HelpURI)
			}
			if len(r.Properties.Tags) > maxTags {
				bad("%s: %d tags, at most %d", where, len(r.Properties.Tags), maxTags)
			}
		}
		if len(run.Results) > maxResults {
			bad("run %d: %d results, at most %d", ri, len(run.Results), maxResults)
		}
		for i, r := range run.Results {
			where := fmt.Sprintf("run %d result %d (%s)", ri, i, r.RuleID)
			idx, ok := ids[r.RuleID]
			if !ok {
				bad("%s: ruleId names no rule of the run", where)
			} else if r.RuleIndex != nil && *r.RuleIndex != idx {
				bad("%s: ruleIndex %d, the rule is at %d", where, *r.RuleIndex, idx)
			}
			if r.Message == nil || r.Message.Text == "" {
				bad("%s: no message.text", where)
			}
			if len(r.Locations) == 0 || len(r.Locations) > maxLocations {
				bad("%s: %d locations, want 1..%d", where, len(r.Locations), maxLocations)
			}
			for _, loc := range r.Locations {
				checkLocation(where, loc, bad)
			}
			seen := map[int]bool{}
			for _, loc := range r.RelatedLocations {
				checkLocation(where+" related", loc, bad)
				if loc.ID == nil || seen[*loc.ID] {
					bad("%s: a related location without a unique id", where)
				} else {
					seen[*loc.ID] = true
				}
			}
			if len(r.PartialFingerprints) == 0 {
				bad("%s: no partialFingerprints", where)
			}
		}
	}
	return errors.Join(errs...)
}

func checkLocation(where string, loc location, bad func(string, ...any)) {
	p := loc.PhysicalLocation
	if p == nil || p.ArtifactLocation == nil || p.ArtifactLocation.URI == "" {
		bad("%s: a location without physicalLocation.artifactLocation.uri", where)
		return
	}
	if _, err := url.Parse(p.ArtifactLocation.URI); err != nil {
		bad("%s: artifact URI %q: %v", where, p.ArtifactLocation.URI, err)
	}
	if p.Region != nil && p.Region.StartLine < 1 {
		bad("%s: region.startLine %d", where, p.Region.StartLine)
	}
}

// Validate is Schema and GitHub together.
func Validate(data []byte) error {
	return errors.Join(Schema(data), GitHub(data))
}

func jsonDecoder(data []byte) *json.Decoder { return json.NewDecoder(bytes.NewReader(data)) }
