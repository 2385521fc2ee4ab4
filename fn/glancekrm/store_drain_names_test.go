package glancekrm

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// TestStoreDrainNamesFit walks the longest names the CRDs allow (a Glance
// of MaxGlanceNameLength, a store of a DNS subdomain's 253 characters,
// dotted, and mixes of both with short ones): every object the drain
// generates is named within its kind's limit (a Job within 63 characters,
// a DNS label, since its pods carry its name in a label), every label
// value is one, two stores never share a name, and the record and Job
// are the ones krm/v1alpha1 names (what explain and the controller look
// up).
func TestStoreDrainNamesFit(t *testing.T) {
	glance43 := "g" + strings.Repeat("l", v1alpha1.MaxGlanceNameLength-1)
	dotted := strings.Repeat(strings.Repeat("s", 62)+".", 4) + "s"
	long := strings.Repeat("s", 252) + "x"
	for _, glance := range []string{"glance", strings.Repeat("g", 30), glance43} {
		for _, stores := range [][2]string{{"a", "b"}, {strings.Repeat("s", 25), "b"}, {dotted, long}, {long, dotted}, {dotted, "b"}} {
			t.Run(fmt.Sprintf("%d-%d-%d", len(glance), len(stores[0]), len(stores[1])), func(t *testing.T) {
				g := strings.Replace(glanceWith("  networkPolicy: {ingress: [{namespaceSelector: {}}]}\n"), "name: glance, namespace: ns", "name: "+glance+", namespace: ns", 1)
				backends := []string{drainingBackend(stores[0], "target", false), drainingBackend(stores[1], "target", false), testBackend("target", glance, true)}
				for i := range backends[:2] {
					backends[i] = strings.Replace(backends[i], "glanceRef: {name: glance}", "glanceRef: {name: "+glance+"}", 1)
					backends[i] = strings.Replace(backends[i], "bucket: "+stores[i]+"-bucket", "bucket: b"+strconv.Itoa(i), 1)
				}
				rl, failed := runFnOn(t, docs(append([]string{g}, backends...)...))
				if failed {
					t.Fatalf("failed: %v", rl.Results)
				}
				seen := map[string]bool{}
				jobs, records := map[string]string{}, map[string]bool{}
				for _, o := range rl.Items {
					id := o.GetKind() + "/" + o.GetName()
					if seen[id] {
						t.Errorf("two %s", id)
					}
					seen[id] = true
					checkName(t, o)
					if o.GetKind() == "Job" && o.GetAnnotation(v1alpha1.AnnotationDrainFrom) != "" {
						jobs[o.GetAnnotation(v1alpha1.AnnotationDrainFrom)] = o.GetName()
					}
					if o.GetKind() == "ConfigMap" && o.GetLabel(v1alpha1.LabelComponent) == v1alpha1.ComponentDrainRecord {
						records[o.GetName()] = true
					}
				}
				for _, s := range stores {
					job := jobs[s]
					if job == "" || job != v1alpha1.DrainJobName(glance, s, job[len(job)-8:]) {
						t.Errorf("store %s: drain Job %q, not the one v1alpha1.DrainJobName names", s, job)
					}
					if !records[v1alpha1.DrainRecordName(glance, s)] {
						t.Errorf("store %s: no record %s", s, v1alpha1.DrainRecordName(glance, s))
					}
				}
			})
		}
	}
}

// checkName checks an object's name and label values (its own, and its
// pods') with Kubernetes' own validators.
func checkName(t *testing.T, o *fn.KubeObject) {
	t.Helper()
	name := o.GetName()
	errs := validation.IsDNS1123Subdomain(name)
	switch o.GetKind() {
	case "Job":
		errs = append(errs, validation.IsDNS1123Label(name)...)
		errs = append(errs, validation.IsValidLabelValue(name)...)
	case "Service":
		errs = append(errs, validation.IsDNS1035Label(name)...)
	}
	for _, e := range errs {
		t.Errorf("%s %s: %s", o.GetKind(), name, e)
	}
	labels := []map[string]string{o.GetLabels()}
	for _, path := range [][]string{{"spec", "template", "metadata", "labels"}, {"spec", "jobTemplate", "spec", "template", "metadata", "labels"}} {
		if l, found, _ := o.NestedStringMap(path...); found {
			labels = append(labels, l)
		}
	}
	for _, l := range labels {
		for k, v := range l {
			for _, e := range append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...) {
				t.Errorf("%s %s: label %s=%s: %s", o.GetKind(), name, k, v, e)
			}
		}
	}
}
