// Package v1alpha1 is the glance.openstack.c5c3.io/v1alpha1 API: the Glance
// and GlanceBackend types, their defaults, and every admission rule of the
// contract as a pure function. The KRM function (fn/) and the runtime
// controller (controller/) both import it and nothing of each other, so a
// rule exists in exactly one place.
//
// +kubebuilder:object:generate=true
// +groupName=glance.openstack.c5c3.io
package v1alpha1
