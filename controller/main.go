// Command glance-krm-controller is the runtime half of glance-krm: it
// checks each GlanceBackend's credentials and projection on the live
// cluster and writes status conditions and events, and nothing else.
package main

import (
	"flag"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/c5c3/glance-krm/controller/backstop"
	"github.com/c5c3/glance-krm/controller/clusters"
	"github.com/c5c3/glance-krm/controller/manager"
)

func main() {
	var o manager.Options
	flag.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8080", "where Prometheus metrics are served (0 disables)")
	flag.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "where /healthz and /readyz are served")
	flag.BoolVar(&o.LeaderElection, "leader-elect", false, "elect a leader, so that replicas can run side by side")
	flag.StringVar(&o.LeaderElectionNS, "leader-election-namespace", "", "namespace of the leader-election Lease (default: the pod's)")
	flag.StringVar(&o.RegistryNamespace, "cluster-registry-namespace", clusters.DefaultNamespace,
		"namespace of the kubeconfig Secrets that register target clusters")
	flag.DurationVar(&o.BackstopPeriod, "backstop-period", backstop.DefaultPeriod,
		"how often every GlanceBackend is judged again regardless of events")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("glance-krm-controller")

	ctx := ctrl.SetupSignalHandler()
	mgr, err := manager.New(ctx, ctrl.GetConfigOrDie(), o)
	if err != nil {
		log.Error(err, "setting up the manager")
		os.Exit(1)
	}
	log.Info("starting")
	if err := mgr.Start(ctx); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}
