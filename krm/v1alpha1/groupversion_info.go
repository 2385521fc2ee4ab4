package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	// Group is the API group of Glance and GlanceBackend, fixed by contract
	// so that existing custom resources work unchanged.
	Group   = "glance.openstack.c5c3.io"
	Version = "v1alpha1"

	GlanceKind        = "Glance"
	GlanceBackendKind = "GlanceBackend"
)

var (
	GroupVersion = schema.GroupVersion{Group: Group, Version: Version}
	// APIVersion is the apiVersion string both kinds carry.
	APIVersion = GroupVersion.String()

	// SchemeBuilder uses apimachinery rather than controller-runtime so the
	// KRM function binary does not link a Kubernetes client.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	AddToScheme   = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Glance{}, &GlanceList{}, &GlanceBackend{}, &GlanceBackendList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
