package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPathBetween(t *testing.T) {
	for name, c := range map[string]struct {
		from, to string
		want     ReleasePath
		ok       bool
	}{
		"the same release":                        {"2025.2", "2025.2", ReleasePath{}, true},
		"the next release":                        {"2025.1", "2025.2", ReleasePath{}, true},
		"across a year":                           {"2025.2", "2026.1", ReleasePath{}, true},
		"SLURP to SLURP":                          {"2025.1", "2026.1", ReleasePath{}, true},
		"a downgrade":                             {"2026.1", "2025.2", ReleasePath{Downgrade: true}, true},
		"a skip from a non-SLURP release":         {"2024.2", "2025.2", ReleasePath{Skipped: []string{"2025.1"}}, true},
		"two SLURP steps at once":                 {"2024.1", "2026.1", ReleasePath{Skipped: []string{"2024.2", "2025.1", "2025.2"}}, true},
		"before SLURP existed (2022.1 -> 2023.1)": {"2022.1", "2023.1", ReleasePath{Skipped: []string{"2022.2"}}, true},
		"not a series":                            {"zed", "2025.2", ReleasePath{}, false},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := PathBetween(c.from, c.to)
			if ok != c.ok {
				t.Fatalf("ok = %v", ok)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestProblem(t *testing.T) {
	for name, c := range map[string]struct{ from, to, reason string }{
		"nothing known before":     {"", "2025.2", ""},
		"no change":                {"2025.2", "2025.2", ""},
		"the next release":         {"2025.2", "2026.1", ""},
		"SLURP to SLURP":           {"2025.1", "2026.1", ""},
		"a downgrade":              {"2026.1", "2025.2", ReasonDowngradeNotSupported},
		"a skip":                   {"2025.2", "2026.2", ReasonUpgradePathInvalid},
		"to no release series":     {"2025.2", "2025.3", ReasonUpgradePathInvalid},
		"from no release series":   {"zed", "2025.2", ReasonUpgradePathInvalid},
		"to a release and a build": {"2025.2", "2026.1-p1", ReasonUpgradePathInvalid},
	} {
		t.Run(name, func(t *testing.T) {
			reason, msg := Problem(c.from, c.to)
			if reason != c.reason || (reason == "") != (msg == "") {
				t.Errorf("Problem(%q, %q) = %q, %q; want reason %q", c.from, c.to, reason, msg, c.reason)
			}
		})
	}
}
