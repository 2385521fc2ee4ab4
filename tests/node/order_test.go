//go:build e2e

package node_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// orderFromCluster reads the order an engine applied in from what the
// cluster recorded: the newest db-sync Job completed before the newest
// ReplicaSet was created, and the newest db-contract Job was created
// after that ReplicaSet's pods were ready and the ReplicaSets before it
// had no pod left.
func (s *scenario) orderFromCluster(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	jobs, err := s.n.Client.BatchV1().Jobs(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	newestJob := func(component string) *batchv1.Job {
		var out *batchv1.Job
		for i := range jobs.Items {
			j := &jobs.Items[i]
			if j.Labels["app.kubernetes.io/component"] == component && (out == nil || out.CreationTimestamp.Before(&j.CreationTimestamp)) {
				out = j
			}
		}
		if out == nil {
			t.Fatalf("no %s Job in %s", component, s.ns)
		}
		return out
	}
	dbSync, contract := newestJob("db-sync"), newestJob("db-contract")
	rss, err := s.n.Client.AppsV1().ReplicaSets(s.ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=glance,app.kubernetes.io/component=api"})
	if err != nil {
		t.Fatal(err)
	}
	var rs *appsv1.ReplicaSet
	for i := range rss.Items {
		if rs == nil || rs.CreationTimestamp.Before(&rss.Items[i].CreationTimestamp) {
			rs = &rss.Items[i]
		}
	}
	if rs == nil {
		t.Fatal("no ReplicaSet of glance")
	}
	if dbSync.Status.CompletionTime == nil {
		t.Fatalf("Job %s never completed", dbSync.Name)
	}
	if rs.CreationTimestamp.Before(dbSync.Status.CompletionTime) {
		t.Errorf("ReplicaSet %s was created at %s, before Job %s completed at %s", rs.Name,
			rs.CreationTimestamp.Format(time.RFC3339), dbSync.Name, dbSync.Status.CompletionTime.Format(time.RFC3339))
	}
	for _, p := range s.apiPods(t) {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && contract.CreationTimestamp.Before(&c.LastTransitionTime) {
				t.Errorf("Job %s was created at %s, before pod %s was ready at %s", contract.Name,
					contract.CreationTimestamp.Format(time.RFC3339), p.Name, c.LastTransitionTime.Format(time.RFC3339))
			}
		}
	}
	for _, old := range rss.Items {
		if old.Name != rs.Name && old.Status.Replicas > 0 {
			t.Errorf("ReplicaSet %s still has %d pods after the sync", old.Name, old.Status.Replicas)
		}
	}
	t.Logf("order: %s completed %s; ReplicaSet %s created %s; %s created %s", dbSync.Name, dbSync.Status.CompletionTime.Format(time.RFC3339),
		rs.Name, rs.CreationTimestamp.Format(time.RFC3339), contract.Name, contract.CreationTimestamp.Format(time.RFC3339))
}

// gitopsBench collects the engines' figures: per engine and release, a
// commit to Healthy (Argo CD) or Ready (Flux), and the requests of the
// client loop.
var gitopsBench = &engineBench{}

type engineBench struct {
	mu     sync.Mutex
	lines  []string
	memory int64
}

func (b *engineBench) record(engine, release, what string, took time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, fmt.Sprintf("%s, %s, %s: commit to healthy in %s", engine, release, what, took.Round(time.Second)))
}

func (b *engineBench) add(line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, line)
}

func (b *engineBench) requests(engine, release string, ok, failed int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, fmt.Sprintf("%s, %s: %d requests, %d failed", engine, release, ok+failed, failed))
}

func (b *engineBench) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n") + fmt.Sprintf("\nnode memory with both engines: %d MiB", b.memory>>20)
}

// replicaSets are the names of glance's ReplicaSets.
func (s *scenario) replicaSets(t *testing.T) []string {
	t.Helper()
	rss, err := s.n.Client.AppsV1().ReplicaSets(s.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=glance,app.kubernetes.io/component=api"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, rs := range rss.Items {
		names = append(names, rs.Name)
	}
	slices.Sort(names)
	return names
}

// sameReplicaSets: no ReplicaSet was made since before, and every API
// pod is ready (the old pods kept serving).
func (s *scenario) sameReplicaSets(t *testing.T, before []string) {
	t.Helper()
	if now := s.replicaSets(t); !slices.Equal(now, before) {
		t.Errorf("ReplicaSets %v, before %v: a rollout started", now, before)
	}
	for _, p := range s.apiPods(t) {
		if !ready(p) {
			t.Errorf("pod %s is not ready", p.Name)
		}
	}
}

// wrongDatabasePassword points the Glance at a database Secret with a
// wrong password (creating it), or back at the right one.
func (s *scenario) wrongDatabasePassword(t *testing.T, wrong bool) {
	t.Helper()
	if wrong {
		secret := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: glance-db-wrong, namespace: %s}\nstringData: {username: %q, password: not-the-password}\n", s.ns, dbUser)
		if err := s.n.Apply(secret); err != nil {
			t.Fatal(err)
		}
		s.edit(t, "      name: glance-db\n", "      name: glance-db-wrong\n")
		return
	}
	s.edit(t, "      name: glance-db-wrong\n", "      name: glance-db\n")
}

// missingConfigMaps are the API pods whose mounted ConfigMap is gone
// while they run, each named with its ConfigMap.
func (s *scenario) missingConfigMaps(t *testing.T) []string {
	t.Helper()
	var missing []string
	for _, p := range s.apiPods(t) {
		cm := mountedConfigMap(p)
		if _, err := s.n.Client.CoreV1().ConfigMaps(s.ns).Get(context.Background(), cm, metav1.GetOptions{}); err != nil {
			missing = append(missing, fmt.Sprintf("%s (pod %s): %v", cm, p.Name, err))
		}
	}
	return missing
}
