//go:build e2e

package packaging_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoorsCommands runs every sh block of the "Three doors" section of
// docs/doors.md (where the README's doors table leads) as written, from
// the repository root, so that what a user copies works.
func TestDoorsCommands(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "docs", "doors.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(raw)
	start := strings.Index(section, "## Three doors")
	if start < 0 {
		t.Fatal("docs/doors.md has no \"## Three doors\" section")
	}
	section = section[start+3:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var blocks []string
	for _, part := range strings.Split(section, "```sh\n")[1:] {
		blocks = append(blocks, part[:strings.Index(part, "```")])
	}
	if len(blocks) < 4 {
		t.Fatalf("found %d sh blocks, want one per door at least", len(blocks))
	}

	env := containerEnv(t)
	tagPinned(t, env, fnImage)
	bin := t.TempDir()
	dockerShim(t, bin)
	for name, target := range map[string]string{
		"kustomize": mustEnv(t, "KUSTOMIZE_BIN"), "glance-krm-fn": mustEnv(t, "GLANCE_KRM_FN"),
	} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	env = append(env, "PATH="+bin+":"+os.Getenv("PATH"))
	for _, block := range blocks {
		t.Run(strings.SplitN(strings.TrimSpace(block), "\n", 2)[0], func(t *testing.T) {
			out, stderr, err := run(t, env, root, "bash", "-euo", "pipefail", "-c", block)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			if strings.Contains(block, "kustomize build") && !strings.Contains(out, "glance-backends-") {
				t.Errorf("the build rendered nothing:\n%s", out)
			}
		})
	}
}
