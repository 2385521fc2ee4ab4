package glance

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/c5c3/glance-krm/controller/conditions"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// JudgeDrains reads the records the Glance's store drain Jobs write
// (ConfigMaps labelled glance.openstack.c5c3.io/component=drain-record)
// into StoresDrained: True once every drain says Complete with no image
// left, False while one runs or its Job has not written yet (the render
// holds the record empty: DrainInProgress) or when one failed
// (DrainFailed: the images it could not move keep their location in the
// leaving store). Nil without a record: no drain was asked for.
func JudgeDrains(glance string, records []corev1.ConfigMap) *conditions.Condition {
	var done, running, failed []string
	for i := range records {
		r := &records[i]
		if r.Labels[v1alpha1.LabelGlance] != glance || r.Labels[v1alpha1.LabelComponent] != v1alpha1.ComponentDrainRecord {
			continue
		}
		d := r.Data
		what := fmt.Sprintf("%s into %s", d[v1alpha1.DrainRecordFrom], d[v1alpha1.DrainRecordTo])
		switch {
		case d[v1alpha1.DrainRecordState] == "":
			from := cmp.Or(r.Annotations[v1alpha1.AnnotationDrainFrom], d[v1alpha1.DrainRecordFrom])
			running = append(running, fmt.Sprintf("%s (waiting for the drain Job: ConfigMap %s has no state yet)", cmp.Or(from, "a store"), r.Name))
		case d[v1alpha1.DrainRecordState] == v1alpha1.DrainComplete && d[v1alpha1.DrainRecordRemaining] == "0":
			done = append(done, what)
		case d[v1alpha1.DrainRecordState] == v1alpha1.DrainFailed:
			failed = append(failed, fmt.Sprintf("%s (%s images left; ConfigMap %s, the Job's log says why)", what, d[v1alpha1.DrainRecordRemaining], r.Name))
		default:
			running = append(running, fmt.Sprintf("%s (%s images left)", what, d[v1alpha1.DrainRecordRemaining]))
		}
	}
	if len(done)+len(running)+len(failed) == 0 {
		return nil
	}
	for _, l := range [][]string{done, running, failed} {
		slices.Sort(l)
	}
	c := &conditions.Condition{Type: v1alpha1.ConditionStoresDrained}
	switch {
	case len(failed) > 0:
		c.Reason, c.Message = v1alpha1.ReasonDrainFailed, "store drain failed: "+strings.Join(failed, ", ")
	case len(running) > 0:
		c.Reason, c.Message = v1alpha1.ReasonDrainInProgress, "store drain running: "+strings.Join(running, ", ")
	default:
		c.OK, c.Reason, c.Message = true, v1alpha1.ReasonDrainComplete, "store drain complete, no image left: "+strings.Join(done, ", ")
	}
	return c
}
