//go:build e2e

package node_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo is the repository an engine syncs from: a bare repository the
// node's pods read over file:// (a hostPath, read-only) and a working
// copy the test commits to and pushes from, as a user does.
type gitRepo struct {
	bare string // mounted at /git in the pod that reads it
	work string
}

// newGitRepo makes both, readable by any user (Argo CD's repo-server runs
// as 999).
func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	root, err := os.MkdirTemp("", "glance-krm-git-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	g := &gitRepo{bare: filepath.Join(root, "glance.git"), work: filepath.Join(root, "work")}
	g.git(t, root, "init", "-q", "--bare", "-b", "main", g.bare)
	g.git(t, root, "init", "-q", "-b", "main", g.work)
	g.git(t, g.work, "remote", "add", "origin", g.bare)
	return g
}

func (g *gitRepo) git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=glance-krm test", "-c", "user.email=test@glance-krm.invalid"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit replaces the folder path of the repository with files (name →
// content), commits and pushes; the commit's hash.
func (g *gitRepo) commit(t *testing.T, path string, files map[string][]byte, message string) string {
	t.Helper()
	dir := filepath.Join(g.work, path)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		writeFile(t, filepath.Join(dir, name), b)
	}
	g.git(t, g.work, "add", "-A")
	g.git(t, g.work, "commit", "-q", "--allow-empty", "-m", message)
	g.git(t, g.work, "push", "-q", "origin", "main")
	return g.git(t, g.work, "rev-parse", "HEAD")
}

// sibling is another repository beside g, under the same mounted folder
// (/git/<name>.git in the pod).
func (g *gitRepo) sibling(t *testing.T, name string) *gitRepo {
	t.Helper()
	root := filepath.Dir(g.bare)
	s := &gitRepo{bare: filepath.Join(root, name+".git"), work: filepath.Join(root, name+"-work")}
	s.git(t, root, "init", "-q", "--bare", "-b", "main", s.bare)
	s.git(t, root, "init", "-q", "-b", "main", s.work)
	s.git(t, s.work, "remote", "add", "origin", s.bare)
	return s
}
