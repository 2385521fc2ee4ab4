package glancekrm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/ini.v1"

	"github.com/c5c3/glance-krm/fn/glancekrm/render"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// The differences between the objects glance-krm generates from a Glance
// and those the seed operator's reconcilers build from it, each applied
// to the two sides below before they are compared, and each for a reason.
var workloadDifferences = map[string]string{
	"managed-by":     "app.kubernetes.io/managed-by names glance-krm, which manages them now, not glance-operator",
	"own labels":     "glance.openstack.c5c3.io/glance, /component and /api mark the generated objects, so the next run replaces them and the controller finds them",
	"annotations":    "argocd.argoproj.io/sync-wave orders the db-sync Job before the Deployments under Argo CD; the image annotations are wire()'s record of what it set; the Jobs' openstack-release annotation names the release they migrate to (the controller judges the upgrade path by it)",
	"config":         "the seed mounts its ConfigMap at /etc/glance/glance-api.conf.d/ and its backends Secret at /etc/glance/backends.conf.d/ and passes both as --config-dir, and reads the database URL and service password from environment variables; glance-krm projects both files into one volume at /etc/glance/glance.conf.d/ and the credentials init container writes the secrets to /etc/glance/glance-api.conf.d/ (glance-krm-* volumes), both directories oslo.config reads by default",
	"uwsgi":          "the seed passes every uWSGI setting on the command line; glance-krm renders them all into glance-api-uwsgi.ini (compared flag by flag; uwsgiDifferences lists what differs), so the command is only uwsgi --ini and runs on any image with glance and uWSGI",
	"probes":         "explicit probe timeouts (the seed's liveness probe has the 1 s default: a pod busy with transfers was killed) and a readiness period of 10 s; liveness tolerates three misses (a minute) before a restart cuts every transfer",
	"preStop":        "after the seed's sleep the preStop hook waits (bounded by the grace period) until no connection to the API port is open: the eventlet server's workers die on SIGTERM at once and would cut a running transfer, and uWSGI's graceful stop waits for its workers, not for what its HTTP router still sends to a slow client",
	"db-sync":        "the Job's name carries the hash of its spec (its template is immutable: a new image, release or config runs it again); it runs db expand and db migrate (the first half of Glance's rolling upgrade; the seed runs db sync, or its own upgrade phases); glance-manage names both config directories and loads the metadata definitions from the seed image's path, else Debian's",
	"db-contract":    "glance-krm generates a second Job, <glance>-db-contract-<hash>, running db contract after the Deployments (Argo CD wave 2, kpt's depends-on); the seed runs its contract phase from its reconciler",
	"job pods":       "the db-sync Job and its pods carry the app name and component labels (the seed's none), so kubectl wait -l finds them and the NetworkPolicy <glance>-jobs covers them, but not the instance label, which the Deployment's selector (and so its autoscaler and budget) counts pods by; the Jobs' pods set fsGroup 42424 like the Deployment's, for the volumes they share with it",
	"cache loop":     "the cache-maintenance container runs glance-krm's own loop (same bound, cadence and tools)",
	"keystone":       "the NetworkPolicy admits, by port, every endpoint the rendered files name (Keystone's among them, which the seed's misses: token validation broke when Keystone listened elsewhere), in one rule after DNS; the seed's ports are all among them",
	"route defaults": "the HTTPRoute writes the values Gateway API's CRD defaults (the parent's group and kind, the backend's group and weight), which mean what the seed's route means once applied: Argo CD compares a custom resource's lists as wholes, so a default the API server adds to a list item is drift after every sync",
	"threads":        "glance-krm runs 16 uWSGI threads per process where the Glance names none (the seed's 1), and the seed's memory formula adds 32Mi for each thread past the first: 3,024Mi for 2 × 16 where the seed gives 2,064Mi for 2 × 1",
	"jobs policy":    "glance-krm generates a second NetworkPolicy, <glance>-jobs, for the db-sync and db-purge pods (DNS and the database only); the seed's policy covered them through the instance label",
}

// TestWorkloadMatchesTheSeed compares, for each seed render case, every
// object glance-krm generates with the one the seed operator's own
// builders produce for the same Glance (seed-workload.json, written by
// hack/seed-render.sh): names, labels, ports, probes, security contexts,
// volumes and mounts, replicas, selectors, budgets and policies, after the
// differences listed in workloadDifferences.
func TestWorkloadMatchesTheSeed(t *testing.T) {
	cases, err := filepath.Glob("../../krm/testdata/seed/render/*/seed-workload.json")
	if err != nil || len(cases) < 10 {
		t.Fatalf("seed workload cases: %d, %v (run make seed-render)", len(cases), err)
	}
	t.Cleanup(func() {
		for reason := range workloadDifferences {
			if !applied[reason] {
				t.Errorf("workloadDifferences lists %q, but no comparison applies it: drop it", reason)
			}
		}
		for change := range newerSeedChanges {
			if !newerApplied[change] {
				t.Errorf("newerSeedChanges lists %q, but no seed object takes it: drop it", change)
			}
		}
	})
	for _, file := range cases {
		dir := filepath.Dir(file)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var seed []struct {
				Kind   string
				Object map[string]any
			}
			if err := json.Unmarshal(raw, &seed); err != nil {
				t.Fatal(err)
			}
			rl, failed := runFile(t, filepath.Join(dir, "input.yaml"))
			if failed {
				t.Fatalf("the function refused the case:\n%s", rl.Results)
			}
			ours := map[string]map[string]any{}
			var uwsgiINI string
			var glance v1alpha1.Glance
			for _, o := range rl.Items {
				if o.GetKind() == "Glance" {
					if err := o.As(&glance); err != nil {
						t.Fatal(err)
					}
				}
				if o.GetLabel(v1alpha1.LabelComponent) == v1alpha1.ComponentConfig {
					uwsgiINI, _, _ = o.NestedString("data", render.UWSGIFile)
				}
				if o.GetLabel(v1alpha1.LabelComponent) != v1alpha1.ComponentWorkload {
					continue
				}
				if o.GetKind() == "NetworkPolicy" && strings.HasSuffix(o.GetName(), "-jobs") {
					because("jobs policy")
					continue
				}
				if o.GetKind() == "Job" && o.GetLabel("app.kubernetes.io/component") == "db-contract" {
					because("db-contract")
					continue
				}
				if _, dup := ours[o.GetKind()]; dup {
					t.Fatalf("two generated %s objects for one API", o.GetKind())
				}
				m, err := o.CopyToResourceNode().Map()
				if err != nil {
					t.Fatal(err)
				}
				ours[o.GetKind()] = m
			}
			var kinds []string
			for _, s := range seed {
				kinds = append(kinds, s.Kind)
				o, ok := ours[s.Kind]
				if !ok {
					t.Errorf("the seed builds a %s, glance-krm generates none", s.Kind)
					continue
				}
				newerSeed(s.Kind, s.Object, &glance.Spec)
				sv, ov := normalize(s.Object), normalize(o)
				if s.Kind == "Deployment" {
					compareUWSGI(t, sv, ov, uwsgiINI)
				}
				shape(s.Kind, sv, ov)
				if diff := cmp.Diff(sv, ov); diff != "" {
					t.Errorf("%s differs from the seed's (-seed +glance-krm):\n%s", s.Kind, diff)
				}
			}
			for k := range ours {
				if !slices.Contains(kinds, k) {
					t.Errorf("glance-krm generates a %s the seed does not build", k)
				}
			}
		})
	}
}

// normalize drops what JSON of a Go zero value adds: nulls, empty maps.
func normalize(v any) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	prune(m)
	delete(m, "apiVersion")
	delete(m, "kind")
	delete(m, "status")
	return m
}

func prune(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		for k, x := range v {
			if prune(x) {
				delete(v, k)
			}
		}
		return len(v) == 0
	case []any:
		for _, x := range v {
			prune(x)
		}
	}
	return false
}

// at walks a path of map keys; list elements are reached with "[name]".
func at(m map[string]any, path ...string) map[string]any {
	cur := m
	for _, p := range path {
		next, _ := cur[p].(map[string]any)
		if next == nil {
			return map[string]any{}
		}
		cur = next
	}
	return cur
}

// applied records which of workloadDifferences a comparison used.
var applied = map[string]bool{}

// because names the listed difference a step of shape applies; a reason
// not in the list is a difference nobody wrote down.
func because(reason string) {
	if _, ok := workloadDifferences[reason]; !ok {
		panic("an undocumented difference: " + reason)
	}
	applied[reason] = true
}

// shape applies workloadDifferences to both sides, in place.
func shape(kind string, seed, ours map[string]any) {
	because("managed-by")
	because("own labels")
	for _, side := range []map[string]any{seed, ours} {
		meta := at(side, "metadata")
		because("annotations")
		delete(meta, "annotations")
		sameLabels(at(meta, "labels"))
		sameLabels(at(side, "spec", "jobTemplate", "metadata", "labels"))
		for _, pod := range pods(kind, side) {
			sameLabels(at(pod, "metadata", "labels"))
			spec := at(pod, "spec")
			because("config")
			delete(spec, "initContainers")
			spec["volumes"] = dropNamed(spec["volumes"], "config", "backends", "db-tls", v1alpha1.VolumeConfig, v1alpha1.VolumeCredentials, v1alpha1.VolumeCredentialsIn)
			if cs, ok := spec["containers"].([]any); ok {
				for _, c := range cs {
					c := c.(map[string]any)
					delete(c, "env")
					c["volumeMounts"] = dropNamed(c["volumeMounts"], "config", "backends", "db-tls", v1alpha1.VolumeConfig, v1alpha1.VolumeCredentials)
					if c["name"] != v1alpha1.GlanceAPIContainer || kind != "Deployment" {
						because("cache loop")
						delete(c, "command") // compared on their own: db-sync, db-purge, cache loop
					} else {
						because("uwsgi")
						c["command"] = nil
						because("probes")
						delete(c, "livenessProbe")
						delete(c, "readinessProbe")
						delete(at(c, "startupProbe"), "successThreshold")
						because("preStop")
						delete(c, "lifecycle")
					}
				}
			}
			prune(spec)
		}
	}
	if kind == "Job" || kind == "CronJob" {
		because("job pods")
		if kind == "Job" {
			because("db-sync")
			name := at(ours, "metadata")["name"].(string)
			at(ours, "metadata")["name"] = name[:strings.LastIndex(name, "-")]
			delete(at(ours, "metadata"), "labels")
			delete(at(ours, "spec", "template"), "metadata")
		}
		for _, pod := range pods(kind, ours) {
			delete(at(pod, "spec", "securityContext"), "fsGroup")
		}
		for _, pod := range pods(kind, seed) {
			delete(at(pod, "metadata", "labels"), "app.kubernetes.io/instance")
		}
	}
	if kind == "HTTPRoute" {
		because("route defaults")
		routeDefaults(at(seed, "spec"))
	}
	if kind == "NetworkPolicy" {
		because("keystone")
		if ports := egressPorts(at(seed, "spec")); slices.ContainsFunc(ports, func(p string) bool { return !slices.Contains(egressPorts(at(ours, "spec")), p) }) {
			return // a port of the seed's is missing: let the diff show it
		}
		at(ours, "spec")["egress"] = at(seed, "spec")["egress"]
	}
	prune(seed)
	prune(ours)
}

// routeDefaults writes into a route's spec what Gateway API's CRD
// defaults in its parents and backends where the route leaves it out.
func routeDefaults(spec map[string]any) {
	fill := func(list any, defaults map[string]any) {
		items, _ := list.([]any)
		for _, it := range items {
			m := it.(map[string]any)
			for k, v := range defaults {
				if _, set := m[k]; !set {
					m[k] = v
				}
			}
		}
	}
	fill(spec["parentRefs"], map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway"})
	rules, _ := spec["rules"].([]any)
	for _, r := range rules {
		fill(r.(map[string]any)["backendRefs"], map[string]any{"group": "", "kind": "Service", "weight": float64(1)})
	}
}

// egressPorts are the protocol/port pairs a policy's egress admits.
func egressPorts(spec map[string]any) []string {
	var out []string
	rules, _ := spec["egress"].([]any)
	for _, r := range rules {
		ps, _ := r.(map[string]any)["ports"].([]any)
		for _, p := range ps {
			m := p.(map[string]any)
			out = append(out, fmt.Sprint(m["protocol"], "/", m["port"]))
		}
	}
	return out
}

func pods(kind string, obj map[string]any) []map[string]any {
	switch kind {
	case "Deployment", "Job":
		return []map[string]any{at(obj, "spec", "template")}
	case "CronJob":
		return []map[string]any{at(obj, "spec", "jobTemplate", "spec", "template")}
	}
	return nil
}

func sameLabels(l map[string]any) {
	for _, k := range []string{v1alpha1.LabelGlance, v1alpha1.LabelComponent, v1alpha1.LabelAPI} {
		delete(l, k)
	}
	if _, ok := l[v1alpha1.LabelManagedBy]; ok {
		l[v1alpha1.LabelManagedBy] = "(managed-by)"
	}
}

func dropNamed(list any, names ...string) any {
	items, _ := list.([]any)
	var out []any
	for _, it := range items {
		if m, ok := it.(map[string]any); ok && slices.Contains(names, m["name"].(string)) {
			continue
		}
		out = append(out, it)
	}
	return out
}

// uwsgiDifferences are the uWSGI settings glance-krm renders otherwise
// than the seed's command line (seed: the seed's value, "" for none;
// ours: glance-krm's, "" for none), each for a reason.
var uwsgiDifferences = map[string]struct{ seed, ours, why string }{
	"wsgi-file":              {"/var/lib/openstack/bin/glance-wsgi-api", "", "a path inside the seed's image; glance 2026.1 ships no such script"},
	"pyargv":                 {"", "", "the config directories the seed's script takes; glance's own module reads oslo.config's default directories"},
	"module":                 {"", "glance.wsgi.api:application", "glance's own WSGI module, in every release that runs under uWSGI"},
	"plugins":                {"", "http,python3", "Debian's uWSGI loads the router and Python as plugins (one with them built in goes on)"},
	"threads":                {"1", "16", "a transfer holds a thread throughout: 2 × 1 served two transfers while the probes waited"},
	"die-on-term":            {"", "true", "uWSGI 2.0 reloads on SIGTERM, so the pod never stopped before its grace period ran out"},
	"hook-master-start":      {"", "unix_signal:15 gracefully_kill_them_all", "SIGTERM lets running requests finish"},
	"worker-reload-mercy":    {"", "20", "how long they may take: the grace period less the preStop sleep and 5 s"},
	"enable-threads":         {"", "true", "glance starts threads of its own (tasks, cache, housekeeping)"},
	"buffer-size":            {"", "65535", "a Keystone token with many roles is larger than the 4 KiB default"},
	"chunked-input-limit":    {"16777216", "67108864", "64 MiB, above the seed's newer 16 MiB (its reason: uWSGI's 1 MB default refused glanceclient's 1 MiB chunks): one chunk of a chunked upload may be as large as a client sends it"},
	"http-keepalive":         {"true", "", "uWSGI 2.0's router closes a keep-alive connection after a request with a body: the client's next request on it failed on the node (unbit/uwsgi#2133); on only when the Glance says so"},
	"add-header":             {"", "Connection: close", "so clients open a connection per request"},
	"http-keepalive-timeout": {"", "", "the idle timeout of keep-alive, which is off unless httpKeepAlive is true"},
}

// compareUWSGI checks that the seed's uWSGI command line and glance-krm's
// (command line plus glance-api-uwsgi.ini) set the same flags.
func compareUWSGI(t *testing.T, seed, ours map[string]any, iniText string) {
	t.Helper()
	cmdOf := func(m map[string]any) []string {
		cs, _ := at(m, "spec", "template", "spec")["containers"].([]any)
		var out []string
		for _, a := range cs[0].(map[string]any)["command"].([]any) {
			out = append(out, a.(string))
		}
		return out
	}
	sc, oc := cmdOf(seed), cmdOf(ours)
	if sc[0] != "uwsgi" {
		if !slices.Equal(oc, []string{"glance-api"}) {
			t.Errorf("eventlet command %v, want glance-api (the seed's %v with oslo.config's default directories)", oc, sc)
		}
		return
	}
	flags := func(argv []string) map[string]string {
		out := map[string]string{}
		for i := 1; i < len(argv); i++ {
			k := strings.TrimPrefix(argv[i], "--")
			if i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "--") || k == "pyargv" {
				out[k] = argv[i+1]
				i++
				continue
			}
			out[k] = "true"
		}
		return out
	}
	want, got := flags(sc), flags(oc)
	f, err := ini.Load([]byte(iniText))
	if err != nil {
		t.Fatalf("glance-api-uwsgi.ini: %v", err)
	}
	for _, k := range f.Section("uwsgi").Keys() {
		got[k.Name()] = k.Value()
	}
	if got["ini"] != v1alpha1.MountConfigDir+render.UWSGIFile {
		t.Errorf("uwsgi --ini %q, want the rendered %s", got["ini"], v1alpha1.MountConfigDir+render.UWSGIFile)
	}
	delete(got, "ini")
	for k, d := range uwsgiDifferences {
		if v, ok := want[k]; ok && d.seed != "" && v != d.seed {
			continue // set in the Glance: the same on both sides
		}
		if d.ours == "" {
			delete(want, k)
			continue
		}
		want[k] = d.ours
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("uWSGI flags (-seed +glance-krm):\n%s", diff)
	}
}
