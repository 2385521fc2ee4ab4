package corpus_test

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/c5c3/glance-krm/fn/glancekrm"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// The seed system's own objects (krm/testdata/seed/cr, copied unchanged by
// hack/seed-crs.py with their source paths): every valid one must pass the
// API server and render; every one of its invalid-cr suites must be
// refused. A seed invalid case the API server alone cannot refuse (a rule
// the seed checks in its webhook and no CEL rule can say; glance-krm ships
// no webhook) is listed here with why, and the build must refuse it.
const seedDir = "../../krm/testdata/seed/cr"

var buildOnly = map[string]string{
	"invalid-cr__11-extraconfig-unknown-option":        "needs the release's option catalog",
	"invalid-cr__12-extraconfig-unknown-section":       "needs the release's option catalog",
	"invalid-cr__18-dbpurge-invalid-schedule":          "needs a cron parser",
	"invalid-cr__26-importplugins-inject-key-colon":    "the Dict-syntax guard on map keys is over the CRD's CEL cost budget",
	"invalid-glancebackend-cr__08-second-default":      "exactly one default spans objects; CEL sees one",
	"invalid-glancebackend-cr__06-immutable-glanceref": "an update of 05; the API server refuses the update, checked below",
}

type seedObject struct {
	file   string // the file name without .yaml
	source string // the seed path it came from
	obj    *unstructured.Unstructured
}

func loadSeed(t *testing.T, sub string) []seedObject {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(seedDir, sub, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no seed objects in %s: %v", sub, err)
	}
	var out []seedObject
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(raw), "\n")
		src, _, _ := strings.Cut(strings.TrimPrefix(first, "# source: "), " ")
		docs := decodeDocs(t, f, raw)
		if len(docs) != 1 {
			t.Fatalf("%s: %d documents", f, len(docs))
		}
		out = append(out, seedObject{strings.TrimSuffix(filepath.Base(f), ".yaml"), src, docs[0]})
	}
	return out
}

// functionErrors runs the function on the objects and returns its error
// results, except those named in skip (by reason tag).
func functionErrors(t *testing.T, objs []*unstructured.Unstructured, skip ...string) []string {
	t.Helper()
	var docs []string
	for _, o := range objs {
		o = o.DeepCopy()
		if o.GetNamespace() == "" {
			o.SetNamespace("openstack")
		}
		b, err := sigsyaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, "- "+strings.ReplaceAll(strings.TrimSuffix(string(b), "\n"), "\n", "\n  "))
	}
	rl := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + strings.Join(docs, "\n") + "\n"
	out, _ := fn.Run(fn.ResourceListProcessorFunc(glancekrm.Process), []byte(rl))
	res, err := fn.ParseResourceList(out)
	if err != nil {
		t.Fatalf("no ResourceList back: %v", err)
	}
	var errs []string
	for _, r := range res.Results {
		if r.Severity == fn.Error && !slices.Contains(skip, r.Tags["reason"]) {
			about := ""
			if r.ResourceRef != nil {
				about = r.ResourceRef.Kind + "/" + r.ResourceRef.Name + ": "
			}
			errs = append(errs, about+r.Message)
		}
	}
	return errs
}

func createIn(t *testing.T, c client.Client, ns string, obj *unstructured.Unstructured) error {
	t.Helper()
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	o := obj.DeepCopy()
	o.SetNamespace(ns)
	return c.Create(ctx, o)
}

func TestSeedValidObjects(t *testing.T) {
	seedValid(t, "valid", 21, 27)
}

// TestSeedNewerValidObjects: the seed's fixtures newer than da0515f0
// (new suites, and the old ones moved to newer releases or fields),
// copied with the commit each was read at (issue 37).
func TestSeedNewerValidObjects(t *testing.T) {
	seedValid(t, "newer/valid", 33, 18)
}

// seedValid holds the seed objects under sub: each passes the API server,
// and each Glance renders with the backends of its suite.
func seedValid(t *testing.T, sub string, wantGlances, wantBackends int) {
	objs := loadSeed(t, sub)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	groups := map[string][]seedObject{} // by the seed directory (or doc) they come from
	for i, o := range objs {
		kinds[o.obj.GetKind()]++
		t.Run("apiserver/"+o.file, func(t *testing.T) {
			if err := createIn(t, c, fmt.Sprintf("seed-%s-%02d", strings.ReplaceAll(sub, "/", "-"), i), o.obj); err != nil {
				t.Errorf("the API server refused the seed's %s: %v", o.source, err)
			}
		})
		g := o.source
		if strings.HasPrefix(g, "tests/") {
			g = path.Dir(g)
		}
		groups[g] = append(groups[g], o)
	}
	if kinds["Glance"] < wantGlances || kinds["GlanceBackend"] < wantBackends {
		t.Errorf("seed objects in %s: %v, want at least %d Glances and %d GlanceBackends (lost some?)", sub, kinds, wantGlances, wantBackends)
	}
	// Each Glance renders with the backends beside it in its suite or doc;
	// a doc's lone Glance draws only the cross-object NoDefaultBackend.
	for g, members := range groups {
		var glances, backends []*unstructured.Unstructured
		for _, m := range members {
			if m.obj.GetKind() == v1alpha1.GlanceKind {
				glances = append(glances, m.obj)
			} else {
				backends = append(backends, m.obj)
			}
		}
		runs := [][]*unstructured.Unstructured{backends}
		if len(glances) > 0 {
			runs = nil
			for _, gl := range glances {
				runs = append(runs, append([]*unstructured.Unstructured{gl}, backends...))
			}
		}
		for _, run := range runs {
			t.Run("function/"+g+"/"+run[0].GetName(), func(t *testing.T) {
				skip := []string{v1alpha1.ReasonWaitingForParent}
				if len(backends) == 0 || len(glances) == 0 {
					skip = append(skip, v1alpha1.ReasonNoDefaultBackend)
				}
				if errs := functionErrors(t, run, skip...); len(errs) > 0 {
					t.Errorf("the function refused the seed's %s:\n%s", g, strings.Join(errs, "\n"))
				}
			})
		}
	}
}

func TestSeedInvalidObjects(t *testing.T) {
	objs := loadSeed(t, "invalid")
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]seedObject{}
	for _, o := range objs {
		byName[strings.TrimPrefix(o.file, "tests__e2e__glance__")] = o
	}
	var parentGlance *unstructured.Unstructured
	for _, v := range loadSeed(t, "valid") {
		if v.obj.GetKind() == v1alpha1.GlanceKind {
			parentGlance = v.obj
			break
		}
	}
	bases := map[string]bool{"invalid-glancebackend-cr__05-immutable-glanceref-base": true, "invalid-glancebackend-cr__07-default-base": true}
	for i, o := range objs {
		name := strings.TrimPrefix(o.file, "tests__e2e__glance__")
		t.Run(name, func(t *testing.T) {
			err := createIn(t, c, fmt.Sprintf("seed-invalid-%02d", i), o.obj)
			switch why, only := buildOnly[name]; {
			case bases[name] && err != nil:
				t.Errorf("the API server refused the suite's valid base object: %v", err)
			case bases[name]:
				return
			case only && err != nil && name != "invalid-glancebackend-cr__06-immutable-glanceref":
				t.Errorf("listed as build-only (%s) but the API server refuses it: %v; drop it from buildOnly", why, err)
			case !only && err == nil:
				t.Errorf("the API server accepted the seed's invalid %s", o.source)
			}
			run := []*unstructured.Unstructured{o.obj}
			if o.obj.GetKind() == v1alpha1.GlanceBackendKind {
				// The backend's Glance, so that the cross-object rules run:
				// a valid seed Glance under the name its glanceRef gives.
				parent := parentGlance.DeepCopy()
				ref, _, _ := unstructured.NestedString(o.obj.Object, "spec", "glanceRef", "name")
				parent.SetName(ref)
				run = append(run, parent, byName["invalid-glancebackend-cr__07-default-base"].obj)
			}
			if name == "invalid-glancebackend-cr__06-immutable-glanceref" {
				base := byName["invalid-glancebackend-cr__05-immutable-glanceref-base"].obj
				if len(transitionErrors(t, base, o.obj)) == 0 {
					t.Error("the update rules accept the seed's glanceRef change")
				}
				updateRefused(t, c, fmt.Sprintf("seed-update-%02d", i), base, o.obj)
				return
			}
			errs := functionErrors(t, run, v1alpha1.ReasonWaitingForParent)
			// An error about this object; for the second default, the
			// Glance's exactly-one-default error.
			want := o.obj.GetKind() + "/" + o.obj.GetName() + ": "
			if name == "invalid-glancebackend-cr__08-second-default" {
				want = "exactly one default store is allowed"
			}
			var about []string
			for _, e := range errs {
				if strings.Contains(e, want) {
					about = append(about, e)
				}
			}
			if len(about) == 0 {
				t.Errorf("the function accepted the seed's invalid %s", o.source)
			}
		})
	}
}

// updateRefused stores base, then applies next over it: the API server's
// transition rules must refuse.
func updateRefused(t *testing.T, c client.Client, ns string, base, next *unstructured.Unstructured) {
	t.Helper()
	if err := createIn(t, c, ns, base); err != nil {
		t.Fatalf("storing the base: %v", err)
	}
	stored := base.DeepCopy()
	stored.SetNamespace(ns)
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(stored), stored); err != nil {
		t.Fatal(err)
	}
	upd := next.DeepCopy()
	upd.SetNamespace(ns)
	upd.SetResourceVersion(stored.GetResourceVersion())
	if err := c.Update(context.Background(), upd); err == nil {
		t.Error("the API server accepted the seed's immutable-field update")
	}
}

// newerInvalid is the verdict on each invalid-cr case the seed added after
// da0515f0: refused by the API server and the build ("crd"), by the build
// only ("build", a rule the seed checks in its webhook that CEL cannot
// say), or accepted by both, with why (docs/seed.md lists each).
var newerInvalid = map[string]string{
	"31-deployment-nodeselector-invalid-key":     "build",
	"32-jobs-resources-request-above-limit":      "build",
	"33-deployment-toleration-empty-key-equal":   "build",
	"34-autoscaling-cpu-request-zero":            "build",
	"35-autoscaling-behavior-window-above-max":   "build",
	"36-autoscaling-memory-target-unreachable":   "build",
	"37-vertical-autoscaling-beside-autoscaling": "crd",
	"38-vertical-autoscaling-foreign-resource":   "crd",
	"39-vertical-autoscaling-min-above-max":      "build",
	"40-vertical-autoscaling-update-mode":        "crd",
	"41-vertical-autoscaling-min-replicas-zero":  "crd",
	// Not for the seed's release floor (glance-krm keeps every release it
	// proves on real Glance, 2022.2 on: docs/seed.md), but because its
	// image tag names 2026.1 over a 2025.2 spec (ImageReleaseMismatch).
	"42-openstackrelease-below-floor": "build",
}

func TestSeedNewerInvalidObjects(t *testing.T) {
	objs := loadSeed(t, "newer/invalid")
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, o := range objs {
		name := strings.TrimPrefix(o.file, "tests__e2e__glance__invalid-cr__")
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			verdict, ok := newerInvalid[name]
			if !ok {
				t.Fatalf("no verdict for the seed's %s: add it to newerInvalid", o.source)
			}
			apiErr := createIn(t, c, fmt.Sprintf("seed-newer-invalid-%02d", i), o.obj)
			errs := functionErrors(t, []*unstructured.Unstructured{o.obj}, v1alpha1.ReasonWaitingForParent, v1alpha1.ReasonNoDefaultBackend)
			switch {
			case verdict == "crd" && apiErr == nil:
				t.Errorf("the API server accepted the seed's invalid %s", o.source)
			case verdict != "crd" && apiErr != nil:
				t.Errorf("listed as %q but the API server refuses it: %v", verdict, apiErr)
			}
			switch refused := len(errs) > 0; {
			case (verdict == "crd" || verdict == "build") && !refused:
				t.Errorf("the function accepted the seed's invalid %s", o.source)
			case strings.HasPrefix(verdict, "accepted") && refused:
				t.Errorf("listed as accepted but the function refuses it (update newerInvalid and docs/seed.md): %s", strings.Join(errs, "\n"))
			}
		})
	}
	for name := range newerInvalid {
		if !seen[name] {
			t.Errorf("newerInvalid lists %s, which is not in krm/testdata/seed/cr/newer/invalid", name)
		}
	}
}
