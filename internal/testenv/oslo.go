package testenv

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"testing"
)

// osloReadScript reads option values the way glance-api does.
//
//go:embed oslo_read.py
var osloReadScript string

// OsloReadBack reads the files of dirs with Debian's oslo.config, as
// glance-api would (--config-dir, in order), and checks that every option
// of want reads back exactly.
func OsloReadBack(t *testing.T, dirs []string, want map[string]map[string]string) {
	t.Helper()
	options := map[string][]string{}
	for section, kv := range want {
		for k := range kv {
			options[section] = append(options[section], k)
		}
	}
	req, _ := json.Marshal(map[string]any{"files": []string{}, "dirs": dirs, "options": options})
	for _, py := range Pythons(t) {
		cmd := py.Command(osloReadScript)
		cmd.Stdin = bytes.NewReader(req)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: oslo.config could not read the rendered files: %v\n%s", py.Suite, err, stderr.String())
		}
		var read map[string]map[string]string
		if err := json.Unmarshal(got, &read); err != nil {
			t.Fatalf("%v: %s", err, got)
		}
		for section, kv := range want {
			for k, v := range kv {
				if read[section][k] != v {
					t.Errorf("%s: [%s] %s: oslo.config read %q, want %q", py.Suite, section, k, read[section][k], v)
				}
			}
		}
	}
}
