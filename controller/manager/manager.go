// Package manager assembles the glance-krm controller: the cache
// (Secrets by metadata only), the field indexes, both reconcilers, health
// checks, metrics and leader election. main and the tests share it.
package manager

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/c5c3/glance-krm/controller/backend"
	"github.com/c5c3/glance-krm/controller/backstop"
	"github.com/c5c3/glance-krm/controller/clusters"
	"github.com/c5c3/glance-krm/controller/glance"
	"github.com/c5c3/glance-krm/controller/index"
	"github.com/c5c3/glance-krm/controller/secretwatch"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// resync is the informers' resync: long, because it re-delivers every
// cached object (backends, Glances, Deployments) and so judges each
// backend once per cache; the backstop judges each once per its period.
var resync = 10 * time.Hour

// Options are the command line's settings.
type Options struct {
	MetricsAddr       string
	ProbeAddr         string
	LeaderElection    bool
	LeaderElectionNS  string
	RegistryNamespace string
	// BackstopPeriod is how often every backend is judged again
	// regardless of events (backstop.DefaultPeriod when zero).
	BackstopPeriod time.Duration
	// NewClient lets tests wrap the manager's client (to count writes).
	NewClient client.NewClientFunc
}

// Scheme knows the built-in kinds the controller reads and both of ours.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// Leader election's Lease lives in the controller's own namespace.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=glance-krm-system,resources=leases,verbs=get;create;update

// New builds the manager with both reconcilers registered.
func New(ctx context.Context, cfg *rest.Config, o Options) (ctrl.Manager, error) {
	scheme := Scheme()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress:  o.ProbeAddr,
		LeaderElection:          o.LeaderElection,
		LeaderElectionID:        "glance-krm-controller.glance.openstack.c5c3.io",
		LeaderElectionNamespace: o.LeaderElectionNS,
		NewClient:               o.NewClient,
		Cache: cache.Options{
			DefaultTransform: cache.TransformStripManagedFields(),
			SyncPeriod:       &resync,
			// Only the Deployments glance-krm wired or generated: it labels
			// each with its Glance. The cluster's other Deployments are
			// neither listed, watched nor held.
			ByObject: map[client.Object]cache.ByObject{
				&appsv1.Deployment{}: {Label: glanceLabelled()},
				// Likewise the Jobs: a Glance's glance-manage Jobs say
				// which release its schema is at.
				&batchv1.Job{}: {Label: glanceLabelled()},
				// And of the ConfigMaps only the store drains' records.
				&corev1.ConfigMap{}: {Label: labels.SelectorFromSet(labels.Set{v1alpha1.LabelComponent: v1alpha1.ComponentDrainRecord})},
			},
		},
		Client: client.Options{Cache: &client.CacheOptions{
			// Secret data is read live, never through (or into) the cache.
			DisableFor: []client.Object{&corev1.Secret{}},
		}},
	})
	if err != nil {
		return nil, err
	}
	if err := index.Setup(ctx, mgr); err != nil {
		return nil, err
	}
	secretEvents := make(chan event.GenericEvent, 1024)
	if err := mgr.Add(&secretwatch.Stream{Client: metadata.NewForConfigOrDie(cfg), Events: secretEvents}); err != nil {
		return nil, err
	}
	period := o.BackstopPeriod
	if period <= 0 {
		period = backstop.DefaultPeriod
	}
	backstopEvents := make(chan event.GenericEvent, 1024)
	if err := mgr.Add(&backstop.Backstop{Reader: mgr.GetClient(), Period: period, Events: backstopEvents}); err != nil {
		return nil, err
	}
	registry := &clusters.Registry{Reader: mgr.GetAPIReader(), Namespace: o.RegistryNamespace, Scheme: scheme}
	if err := (&backend.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Clusters: registry}).SetupWithManager(mgr, secretEvents, backstopEvents); err != nil {
		return nil, err
	}
	if err := (&glance.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("glance-krm-controller")}).SetupWithManager(mgr); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}

// glanceLabelled selects objects that carry the
// glance.openstack.c5c3.io/glance label.
func glanceLabelled() labels.Selector {
	req, err := labels.NewRequirement(v1alpha1.LabelGlance, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	return labels.NewSelector().Add(*req)
}
