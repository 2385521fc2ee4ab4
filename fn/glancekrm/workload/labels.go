package workload

import (
	"maps"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// The names, labels and ports of the objects generated from a Glance are
// the seed operator's (C5C3/cobaltcore operators/glance), so that a user
// moving from it to GitOps can diff the two: the stable Service, the
// Deployment, PDB and HPA of the API named "default" and the db-purge
// CronJob are named like the Glance; pods carry app.kubernetes.io/name
// glance, instance and component api. What differs is written down
// beside it (README, "The generated set").
const (
	appName             = "glance"
	componentAPI        = "api"
	componentDBSync     = "db-sync"
	componentDBContract = "db-contract"
	componentDBPurge    = "db-purge"
	openStackUID        = int64(42424)
	labelAppName        = "app.kubernetes.io/name"
	labelAppInstance    = "app.kubernetes.io/instance"
	labelAppComponent   = "app.kubernetes.io/component"
	labelJobName        = "batch.kubernetes.io/job-name"

	// Ordering: the sync waves (waves.go) for Argo CD and Flux's
	// folders; kpt's depends-on on the contract and drain Jobs names the
	// Deployments, whose names do not change. (A depends-on on the
	// Deployments would name the db-sync Job, whose name follows the
	// first API's files, and so change every other API's Deployment with
	// them: docs/workload.md says how to order it under kpt.)
	annotationDependsOn = "config.kubernetes.io/depends-on"
)

// instanceOf is an API's app.kubernetes.io/instance: the Glance's name
// for the API named "default" (the seed operator's one API), and
// <glance>-<api> for the others, so that no API's selector matches another
// API's pods. Objects of no API (the Jobs) take the Glance's name.
func instanceOf(glance, api string) string {
	if api == "" {
		return glance
	}
	return v1alpha1.APIObjectName(glance, api)
}

// selectorLabels select one API's pods (the seed's selector for the
// default API).
func selectorLabels(instance string) map[string]string {
	return map[string]string{labelAppName: appName, labelAppInstance: instance}
}

// commonLabels are the seed operator's labels of every generated object,
// with managed-by naming who manages them now.
func commonLabels(instance string) map[string]string {
	l := selectorLabels(instance)
	l[v1alpha1.LabelManagedBy] = v1alpha1.ManagedByGlanceKRM
	return l
}

// podLabels are an API pod's labels: the seed's component labels plus the
// Glance and API it belongs to, which the controller reads.
func podLabels(glance, api, component string) map[string]string {
	l := commonLabels(instanceOf(glance, api))
	l[labelAppComponent] = component
	l[v1alpha1.LabelGlance] = glance
	if api != "" {
		l[v1alpha1.LabelAPI] = api
	}
	return l
}

// jobPodLabels are a db-sync or db-purge pod's labels: the seed's, less
// the instance label. The Deployment's selector (immutable, so kept as
// the seed's: name and instance) is what its HorizontalPodAutoscaler and
// PodDisruptionBudget count pods by; a Job pod matching it, which asks
// for no resources, kept the autoscaler from computing any utilization.
func jobPodLabels(glance, component string) map[string]string {
	return map[string]string{
		labelAppName: appName, labelAppComponent: component,
		v1alpha1.LabelManagedBy: v1alpha1.ManagedByGlanceKRM, v1alpha1.LabelGlance: glance,
	}
}

// objectLabels mark a generated object as glance-krm's, for its Glance
// (and API), so that the next run replaces it.
func objectLabels(glance, api string, base map[string]string) map[string]string {
	l := maps.Clone(base)
	l[v1alpha1.LabelGlance] = glance
	l[v1alpha1.LabelComponent] = v1alpha1.ComponentWorkload
	if api != "" {
		l[v1alpha1.LabelAPI] = api
	}
	return l
}
