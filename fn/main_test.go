package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/c5c3/glance-krm/fn/glancekrm"
)

func TestRunExitCodes(t *testing.T) {
	standalone, err := os.ReadFile("glancekrm/testdata/standalone/expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	twoDefaults, err := os.ReadFile("glancekrm/testdata/two-defaults/expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		in         string
		code       int
		stderr     []string
		stdoutHave string
	}{
		"valid input renders, exit 0, quiet stderr": {in: string(standalone), code: 0, stdoutHave: "glance-backends-"},
		"an error result fails the run and is on stderr": {
			in: string(twoDefaults), code: 1,
			stderr: []string{"NoDefaultBackend", "exactly one default store is allowed", "Glance/openstack/glance"},
		},
		"not YAML": {
			in: "garbage: [", code: 1,
			stderr:     []string{"the input is not a ResourceList"},
			stdoutHave: "severity: error",
		},
		"not a ResourceList": {
			in: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", code: 1,
			stderr: []string{"the input is not a ResourceList", `expected ResourceList`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := glancekrm.Filter(strings.NewReader(tc.in), &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			for _, s := range tc.stderr {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr.String())
				}
			}
			if tc.code == 0 && stderr.Len() > 0 {
				t.Errorf("a clean run wrote to stderr:\n%s", stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.stdoutHave) {
				t.Errorf("stdout lacks %q", tc.stdoutHave)
			}
		})
	}
}
