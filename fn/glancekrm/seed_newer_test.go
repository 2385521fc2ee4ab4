package glancekrm

import (
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// newerSeedChanges are what the seed's newer renderer builds otherwise
// than its code at da0515f0, which wrote seed-workload.json: that
// version's code cannot be fetched whole, so the file cannot be written
// again; each change was read in the seed's file at the commit named
// (issue 37) and is applied to the seed's side before the comparison.
// The figures are restated here from the seed's sources, not taken from
// glance-krm's code, so the comparison still holds glance-krm to them.
var newerSeedChanges = map[string]string{
	"resources":     "internal/common/types/resources.go at 06655baf, glance's reconcile_deployment.go at 11d2c20a: its webhook stores no resources; what the block leaves unnamed gets a 70m CPU request and no CPU limit, and as memory request and limit 16Mi + processes × (1Gi + (threads − 1) × 32Mi); the cache-maintenance container 25m and 256Mi",
	"job resources": "internal/common/job/pod.go at 43f6b745: every Job and CronJob container a 70m CPU request and 368Mi as memory request and limit",
	"startup probe": "reconcile_deployment.go at 11d2c20a: GET /healthcheck every 10 s, 8 s timeout, 30 failures before liveness takes over",
	"chunked input": "internal/common/deployment/uwsgi.go at ed109f2d: --chunked-input-limit 16777216",
}

var newerApplied = map[string]bool{}

func newer(change string) {
	if _, ok := newerSeedChanges[change]; !ok {
		panic("a newer-seed change nobody wrote down: " + change)
	}
	newerApplied[change] = true
}

// newerSeed applies newerSeedChanges to the seed's object of kind for the
// Glance spec (as written), in place.
func newerSeed(kind string, obj map[string]any, s *v1alpha1.GlanceSpec) {
	for _, pod := range pods(kind, obj) {
		cs, _ := at(pod, "spec")["containers"].([]any)
		for _, c := range cs {
			c := c.(map[string]any)
			switch {
			case kind != "Deployment":
				newer("job resources")
				var named *corev1.ResourceRequirements
				if s.Jobs != nil {
					named = s.Jobs.Resources
				}
				c["resources"] = seedDefaults(asMap(named), "70m", "368Mi")
			case c["name"] == v1alpha1.GlanceAPIContainer:
				newer("resources")
				// The block as written: the older webhook's stored default is gone.
				c["resources"] = seedDefaults(asMap(s.Deployment.Resources), "70m", fmt.Sprintf("%dMi", seedAPIMemoryMi(s)))
				newer("startup probe")
				c["startupProbe"] = map[string]any{
					"httpGet":          map[string]any{"path": "/healthcheck", "port": float64(v1alpha1.APIPort)},
					"periodSeconds":    float64(10),
					"timeoutSeconds":   float64(8),
					"failureThreshold": float64(30),
				}
				if cmd, _ := c["command"].([]any); len(cmd) > 0 && cmd[0] == "uwsgi" {
					newer("chunked input")
					c["command"] = slices.Insert(cmd, 1, any("--chunked-input-limit"), any("16777216"))
				}
			default:
				newer("resources")
				// The older seed's figures were fixed; the newer reads
				// spec.imageCache.maintenanceResources.
				c["resources"] = seedDefaults(asMap(s.ImageCache.MaintenanceResources), "25m", "256Mi")
			}
		}
	}
}

// seedDefaults is the seed's per-resource rule on a resources block (a
// JSON map, nil for none): a resource named neither as request nor as
// limit gets cpu as its request, mem as request and limit.
func seedDefaults(b map[string]any, cpu, mem string) map[string]any {
	req, _ := b["requests"].(map[string]any)
	limits, _ := b["limits"].(map[string]any)
	out := map[string]any{"requests": copyMap(req), "limits": copyMap(limits)}
	r, l := out["requests"].(map[string]any), out["limits"].(map[string]any)
	if r["cpu"] == nil && l["cpu"] == nil {
		r["cpu"] = cpu
	}
	if r["memory"] == nil && l["memory"] == nil {
		r["memory"], l["memory"] = mem, mem
	}
	return out
}

// asMap is a resources block as JSON decodes it, nil for none.
func asMap(r *corev1.ResourceRequirements) map[string]any {
	if r == nil {
		return nil
	}
	b, _ := json.Marshal(r)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func copyMap(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// seedAPIMemoryMi is the seed's memory for glance-api, in MiB, with the
// seed's own process and thread counts: uWSGI's 2 × 1 from 2026.1, the
// eventlet workers (2) before; glance-krm's threads where the Glance
// names none (workloadDifferences "threads").
func seedAPIMemoryMi(s *v1alpha1.GlanceSpec) int64 {
	p, t := int64(2), int64(1)
	var a v1alpha1.APIServerSpec
	if s.APIServer != nil {
		a = *s.APIServer
	}
	if v1alpha1.ReleaseAtLeast(s.OpenStackRelease, 2026, 1) {
		var u v1alpha1.UWSGISpec
		if a.UWSGI != nil {
			u = *a.UWSGI
		}
		if u.Processes > 0 {
			p = int64(u.Processes)
		}
		if u.Threads > 0 {
			t = int64(u.Threads)
		} else {
			because("threads")
			t = 16
		}
	} else if a.Workers != nil {
		p = int64(*a.Workers)
	}
	return 16 + p*(1024+(t-1)*32)
}
