// Package findings writes what the function's checks and explain find in
// the formats review tools read: SARIF 2.1.0 (code-scanning UIs), GitHub
// Actions workflow commands (annotations on a pull request's files), and
// plain text, each finding with the file and line it is about.
package findings

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/owenrumney/go-sarif/v2/sarif"
)

// Levels of a finding, SARIF's words.
const (
	Error   = "error"
	Warning = "warning"
	Note    = "note"
)

// Formats Write knows.
const (
	FormatText   = "text"
	FormatSARIF  = "sarif"
	FormatGitHub = "github"
)

// A Finding is one thing a check found.
type Finding struct {
	Rule    string // a stable rule id ("kind", "exactly-one-default", "store-removed")
	Level   string
	Message string
	File    string // relative to where the tool ran, "" when unknown
	Line    int    // 1-based, 0 when unknown
	Object  string // the object it is about: "Glance openstack/glance"

	// What a KRM result of the function says besides (Results).
	Ref        *Ref   // the object, nil for the run or the functionConfig
	Field      string // the field path, "" for the whole object
	Reason     string // the contract's Reason, when there is one
	FieldError bool   // Message is a field error's own text, written as it is
}

// Tool names the program that found them.
type Tool struct{ Name, Version, InformationURI string }

// Write writes findings in a format.
func Write(w io.Writer, format string, tool Tool, fs []Finding) error {
	switch format {
	case FormatSARIF:
		return sarifLog(w, tool, fs)
	case FormatGitHub:
		for _, f := range fs {
			if _, err := fmt.Fprintln(w, github(f)); err != nil {
				return err
			}
		}
		return nil
	case FormatText, "":
		for _, f := range fs {
			where := f.File
			if where != "" && f.Line > 0 {
				where += fmt.Sprintf(":%d", f.Line)
			}
			if where != "" {
				where += ": "
			}
			if _, err := fmt.Fprintf(w, "%s%s: %s\n", where, f.Level, f.Message); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown format %q: use %s, %s or %s", format, FormatText, FormatSARIF, FormatGitHub)
}

func sarifLog(w io.Writer, tool Tool, fs []Finding) error {
	report, err := sarif.New(sarif.Version210, true)
	if err != nil {
		return err
	}
	run := sarif.NewRunWithInformationURI(tool.Name, tool.InformationURI)
	if tool.InformationURI == "" {
		run.Tool.Driver.InformationURI = nil // the schema wants a URI or nothing
	}
	run.Tool.Driver.WithVersion(tool.Version)
	rules := []string{}
	for _, f := range fs {
		if !slices.Contains(rules, f.Rule) {
			rules = append(rules, f.Rule)
		}
	}
	slices.Sort(rules)
	for _, r := range rules {
		run.AddRule(r).WithShortDescription(sarif.NewMultiformatMessageString(r))
	}
	for _, f := range fs {
		res := run.CreateResultForRule(f.Rule).WithLevel(f.Level).WithMessage(sarif.NewTextMessage(f.Message))
		loc := sarif.NewLocation()
		if f.File != "" {
			phys := sarif.NewPhysicalLocation().WithArtifactLocation(sarif.NewSimpleArtifactLocation(f.File))
			if f.Line > 0 {
				phys.WithRegion(sarif.NewRegion().WithStartLine(f.Line))
			}
			loc.WithPhysicalLocation(phys)
		}
		if f.Object != "" {
			loc.AddLogicalLocations(sarif.NewLogicalLocation().WithFullyQualifiedName(f.Object))
		}
		res.AddLocation(loc)
	}
	report.AddRun(run)
	return report.PrettyWrite(w)
}

// github is a workflow command: ::error file=F,line=L,title=T::message,
// with the characters the runner reads specially escaped.
func github(f Finding) string {
	level := f.Level
	if level == Note {
		level = "notice"
	}
	var props []string
	if f.File != "" {
		props = append(props, "file="+property(f.File))
		if f.Line > 0 {
			props = append(props, fmt.Sprintf("line=%d", f.Line))
		}
	}
	props = append(props, "title="+property(f.Rule))
	return fmt.Sprintf("::%s %s::%s", level, strings.Join(props, ","), data(f.Message))
}

func data(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func property(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
