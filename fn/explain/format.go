package explain

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/c5c3/glance-krm/fn/findings"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Formats Write knows.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
)

// Write prints the report in a format: text for a terminal, Markdown for
// a pull-request comment, JSON for tools.
func (r *Report) Write(w io.Writer, format string) error {
	switch format {
	case FormatJSON:
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(r)
	case FormatMarkdown:
		_, err := io.WriteString(w, r.markdown())
		return err
	case FormatText, "":
		_, err := io.WriteString(w, r.text())
		return err
	}
	return fmt.Errorf("unknown format %q: use text, markdown or json", format)
}

// lines are a Glance's changes as short sentences, shared by text and
// Markdown.
func (c GlanceChange) lines() []string {
	var out []string
	if c.ReleaseBefore != "" {
		out = append(out, "release: "+arrow(c.ReleaseBefore, c.Release))
	}
	for _, s := range c.Stores {
		switch s.Change {
		case "added":
			out = append(out, fmt.Sprintf("store %s added", s.Store))
		case "removed":
			out = append(out, fmt.Sprintf("store %s removed", s.Store))
		case "drains":
			out = append(out, fmt.Sprintf("store %s drains into %s: a Job moves its images (remove the store in a later commit, once its record says Complete)", s.Store, s.To))
		case "renamed":
			out = append(out, fmt.Sprintf("store renamed: %s", arrow(s.From, s.Store)))
			for _, o := range s.Options {
				out = append(out, fmt.Sprintf("store %s: %s %s", s.Store, o.Option, arrow(o.Before, o.After)))
			}
		default:
			for _, o := range s.Options {
				out = append(out, fmt.Sprintf("store %s: %s %s", s.Store, o.Option, arrow(o.Before, o.After)))
			}
		}
	}
	for _, o := range c.NoLongerRead {
		out = append(out, fmt.Sprintf("no longer read by %s: %s", c.Release, o))
	}
	for _, d := range c.Defaults {
		out = append(out, fmt.Sprintf("default store (API %s): %s", d.API, arrow(d.Before, d.After)))
	}
	apis := map[string]bool{}
	for _, o := range c.Options {
		apis[o.API] = true
	}
	for _, o := range c.Options {
		file := "glance-api.conf"
		if len(apis) > 1 || o.API != v1alpha1.DefaultAPIName {
			file += " (API " + o.API + ")"
		}
		out = append(out, fmt.Sprintf("%s [%s] %s: %s", file, o.Section, o.Option, arrow(o.Before, o.After)))
	}
	for _, s := range c.APIStores {
		out = append(out, fmt.Sprintf("stores of API %s: %s", s.API, arrow(strings.Join(s.Before, ", "), strings.Join(s.After, ", "))))
	}
	for _, rn := range c.Renamed {
		switch {
		case rn.Before == "":
			out = append(out, fmt.Sprintf("%s added: %s", rn.Kind, rn.After))
		case rn.After == "":
			out = append(out, fmt.Sprintf("%s no longer mounted: %s", rn.Kind, rn.Before))
		default:
			out = append(out, fmt.Sprintf("%s renamed: %s", rn.Kind, arrow(rn.Before, rn.After)))
		}
	}
	for _, group := range []struct {
		label string
		items []string
	}{{"keeps its name", c.Kept}, {"added", c.Added}, {"removed", c.Removed}, {"changes", c.Changed}, {"rolls", c.Rolls}, {"stays", c.Stays}} {
		for _, item := range group.items {
			out = append(out, group.label+": "+item)
		}
	}
	return out
}

func arrow(before, after string) string {
	q := func(s string) string {
		if s == "" {
			return "(none)"
		}
		return s
	}
	return q(before) + " -> " + q(after)
}

func (w Warning) line() string {
	s := fmt.Sprintf("%s: %s", w.Kind, w.Message)
	switch {
	case w.Blocking && w.Acknowledged:
		s += " [acknowledged]"
	case w.Blocking:
		s += fmt.Sprintf(" [blocks the merge; acknowledge with --acknowledge %s]", w.ID)
	}
	return s
}

func (r *Report) warningsOf(glance string) []Warning {
	var out []Warning
	for _, w := range r.Warnings {
		if w.Glance == glance {
			out = append(out, w)
		}
	}
	return out
}

func (r *Report) text() string {
	var b strings.Builder
	if len(r.Glances) == 0 {
		b.WriteString("no Glance in either render\n")
	}
	for _, c := range r.Glances {
		fmt.Fprintf(&b, "Glance %s (%s, release %s)\n", c.Glance, c.Status, c.Release)
		for _, l := range c.lines() {
			fmt.Fprintf(&b, "  %s\n", l)
		}
		for _, w := range r.warningsOf(c.Glance) {
			fmt.Fprintf(&b, "  WARNING %s\n", w.line())
		}
	}
	return b.String()
}

func (r *Report) markdown() string {
	var b strings.Builder
	b.WriteString("## glance-krm: what this change does to Glance\n\n")
	if len(r.Glances) == 0 {
		b.WriteString("No Glance in either render.\n")
	}
	for _, c := range r.Glances {
		fmt.Fprintf(&b, "### Glance `%s` (%s, release %s)\n\n", c.Glance, c.Status, c.Release)
		for _, w := range r.warningsOf(c.Glance) {
			fmt.Fprintf(&b, "> [!WARNING]\n> %s\n\n", mdEscape(w.line()))
		}
		lines := c.lines()
		if len(lines) == 0 {
			b.WriteString("Nothing changes.\n\n")
			continue
		}
		for _, l := range lines {
			fmt.Fprintf(&b, "- %s\n", strings.ReplaceAll(mdEscape(l), " -&gt; ", " → "))
		}
		b.WriteString("\n")
	}
	if r.Blocked() {
		b.WriteString("**Blocked**: a warning above needs an acknowledgement before this merges.\n")
	}
	return b.String()
}

// mdEscape keeps a value from turning into Markdown.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;", "`", "'").Replace(s)
}

// Findings are the report's warnings for review tools: an unacknowledged
// blocking warning is an error, any other a warning, each about the AFTER
// render's file and its Glance.
func (r *Report) Findings(file string) []findings.Finding {
	var out []findings.Finding
	for _, w := range r.Warnings {
		level, msg := findings.Warning, w.Message
		switch {
		case w.Blocking && !w.Acknowledged:
			level, msg = findings.Error, msg+" (blocks the merge; acknowledge with --acknowledge "+w.ID+")"
		case w.Acknowledged:
			msg += " (acknowledged)"
		}
		out = append(out, findings.Finding{Rule: w.Kind, Level: level, Message: msg, File: file, Object: "Glance " + w.Glance})
	}
	return out
}
