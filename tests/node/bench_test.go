//go:build e2e

package node_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// bench collects what make bench-node reports (GLANCE_KRM_NODE_BENCH
// names the file it writes): per release, apply to Available, the db-sync
// Job's run, the default flip's rollout and its failed requests, and for
// the node its start, the images' import and its memory at the end.
var bench = &nodeBench{releases: map[string]*releaseBench{}}

type nodeBench struct {
	mu                          sync.Mutex
	images, nodeReady, imported time.Duration
	memory                      int64
	releases                    map[string]*releaseBench
}

type releaseBench struct {
	available, dbSync, rollout, slowest time.Duration
	requests, failed                    int64
}

func (b *nodeBench) record(rel string, f func(*releaseBench)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.releases[rel]
	if r == nil {
		r = &releaseBench{}
		b.releases[rel] = r
	}
	f(r)
}

// write replaces the node section of BENCHMARKS.md (between its markers)
// with this run's figures.
func (b *nodeBench) write(path string, rels []release) error {
	var s strings.Builder
	fmt.Fprintf(&s, "%s\n\n## A real node (`make bench-node`)\n\n", benchBegin)
	fmt.Fprintf(&s, "One single-node cluster (internal/testenv/node) on this 2-core machine, every release side by side in its own namespace, from `tests/node` (%s).\n\n", time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintf(&s, "| node | value |\n| --- | --- |\n| images built or found in the cache | %s |\n| node from nothing to Ready | %s |\n| images imported into containerd | %s |\n| memory of the node's processes and pods at the end | %d MiB |\n\n",
		b.images.Round(100*time.Millisecond), b.nodeReady.Round(100*time.Millisecond), b.imported.Round(100*time.Millisecond), b.memory>>20)
	fmt.Fprintf(&s, "| release | apply → Available | db-sync Job | default flip: rollout | requests during the flip | slowest | failed (goal 0) | verdict |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rels {
		x := b.releases[r.name]
		if x == nil {
			x = &releaseBench{}
		}
		verdict := "met"
		if x.failed > 0 || x.requests == 0 {
			verdict = "not met"
		}
		fmt.Fprintf(&s, "| %s (%s) | %s | %s | %s | %d | %s | %d | %s |\n", r.name, r.suite, x.available.Round(100*time.Millisecond),
			x.dbSync.Round(time.Second), x.rollout.Round(100*time.Millisecond), x.requests, x.slowest.Round(100*time.Millisecond), x.failed, verdict)
	}
	fmt.Fprintf(&s, "\nThe releases run at once, so each figure includes waiting for the CPU the others use.\n\n%s\n", benchEnd)
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := string(old)
	if i, j := strings.Index(text, benchBegin), strings.Index(text, benchEnd); i >= 0 && j > i {
		text = text[:i] + s.String() + text[j+len(benchEnd)+1:]
	} else {
		text += "\n" + s.String()
	}
	return os.WriteFile(path, []byte(text), 0o644)
}

const (
	benchBegin = "<!-- bench-node: begin (written by make bench-node) -->"
	benchEnd   = "<!-- bench-node: end -->"
)
