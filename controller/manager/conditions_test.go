package manager_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/c5c3/glance-krm/controller/clusters"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

const (
	T = metav1.ConditionTrue
	F = metav1.ConditionFalse
)

// TestCredentialsFollowTheSecret: a Secret created late flips
// CredentialsReady to True without a restart; a key removed, an empty key
// and a value with a control character flip it back, naming the key and
// never the value.
func TestCredentialsFollowTheSecret(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	b := backend(ns, "primary", "glance", true, "s3-credentials")
	create(t, glance(ns, "glance"), b)
	c := wantCondition(t, b, v1alpha1.ConditionCredentialsReady, F, v1alpha1.ReasonWaitingForCredentials)
	if !strings.Contains(c.Message, `"s3-credentials" not found`) {
		t.Errorf("message %q does not say the Secret is missing", c.Message)
	}
	wantCondition(t, b, v1alpha1.ConditionReady, F, v1alpha1.ReasonNotAllReady)

	const access, secret = "AKIA-MARKER-7f3a", "SECRET-MARKER-9c1e"
	s := credentialsSecret(ns, "s3-credentials", access, secret)
	create(t, s)
	wantCondition(t, b, v1alpha1.ConditionCredentialsReady, T, v1alpha1.ReasonCredentialsAvailable)

	for name, mutate := range map[string]func(*corev1.Secret){
		"a key removed":                 func(s *corev1.Secret) { delete(s.Data, v1alpha1.CredentialsSecretAccessKey) },
		"an empty key":                  func(s *corev1.Secret) { s.Data[v1alpha1.CredentialsAccessKeyID] = nil },
		"a newline pasted into the key": func(s *corev1.Secret) { s.Data[v1alpha1.CredentialsSecretAccessKey] = []byte(secret + "\n") },
		"a carriage return in the key":  func(s *corev1.Secret) { s.Data[v1alpha1.CredentialsSecretAccessKey] = []byte(secret + "\r") },
		"a NUL in the key":              func(s *corev1.Secret) { s.Data[v1alpha1.CredentialsAccessKeyID] = []byte(access + "\x00") },
		"a key that is not UTF-8":       func(s *corev1.Secret) { s.Data[v1alpha1.CredentialsSecretAccessKey] = []byte(secret + "\xff") },
		"a # glance_store cannot carry": func(s *corev1.Secret) { s.Data[v1alpha1.CredentialsSecretAccessKey] = []byte(secret + "#1") },
	} {
		t.Run(name, func(t *testing.T) {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
				t.Fatal(err)
			}
			s.Data = credentialsSecret(ns, "", access, secret).Data
			mutate(s)
			if err := k8s.Update(ctx, s); err != nil {
				t.Fatal(err)
			}
			c := wantCondition(t, b, v1alpha1.ConditionCredentialsReady, F, v1alpha1.ReasonWaitingForCredentials)
			if strings.Contains(c.Message, access) || strings.Contains(c.Message, secret) || !strings.Contains(c.Message, "key \"") {
				t.Errorf("message %q must name the key and no value", c.Message)
			}
			s.Data = credentialsSecret(ns, "", access, secret).Data
			if err := k8s.Update(ctx, s); err != nil {
				t.Fatal(err)
			}
			wantCondition(t, b, v1alpha1.ConditionCredentialsReady, T, v1alpha1.ReasonCredentialsAvailable)
		})
	}
}

// TestWaitingForParent: without its Glance a backend waits (and requeues),
// whatever its Secret says; it recovers when the Glance appears and waits
// again when the Glance is deleted.
func TestWaitingForParent(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	b := backend(ns, "primary", "glance", true, "s3-credentials")
	create(t, b, credentialsSecret(ns, "s3-credentials", "a", "s"))
	wantCondition(t, b, v1alpha1.ConditionCredentialsReady, F, v1alpha1.ReasonWaitingForParent)

	g := glance(ns, "glance")
	create(t, g)
	wantCondition(t, b, v1alpha1.ConditionCredentialsReady, T, v1alpha1.ReasonCredentialsAvailable)

	if err := k8s.Delete(ctx, g); err != nil {
		t.Fatal(err)
	}
	wantCondition(t, b, v1alpha1.ConditionCredentialsReady, F, v1alpha1.ReasonWaitingForParent)
}

// TestProjectionAndAggregation walks a Glance through the contract's
// BackendsReady states: waiting for backends, all projected, two defaults,
// and a default whose credentials vanish.
func TestProjectionAndAggregation(t *testing.T) {
	ns := namespace(t)
	g := glance(ns, "glance")
	a := backend(ns, "garage-a", "glance", true, "s3-credentials")
	bb := backend(ns, "garage-b", "glance", false, "s3-credentials")
	create(t, g, a, bb, credentialsSecret(ns, "s3-credentials", "a", "s"))

	// Credentials but no projection yet: a valid default, pending stores.
	wantCondition(t, a, v1alpha1.ConditionConfigProjected, F, v1alpha1.ReasonWaitingForProjection)
	c := wantCondition(t, g, v1alpha1.ConditionBackendsReady, F, v1alpha1.ReasonWaitingForBackends)
	if !strings.Contains(c.Message, "garage-a (WaitingForProjection)") {
		t.Errorf("BackendsReady message %q does not list the pending store", c.Message)
	}

	// The rendered Secret has garage-a only: garage-b stays pending.
	sec, d := wired(ns, "glance", "garage-a")
	create(t, sec, d)
	wantCondition(t, a, v1alpha1.ConditionConfigProjected, T, v1alpha1.ReasonConfigProjected)
	wantCondition(t, a, v1alpha1.ConditionReady, T, v1alpha1.ReasonAllReady)
	// It was WaitingForProjection before the Deployment existed too: wait
	// for the verdict on the new Secret, not the earlier one.
	wantMessage(t, bb, v1alpha1.ConditionConfigProjected, F, v1alpha1.ReasonWaitingForProjection, "has no [garage-b] section")

	// A new render with both stores, as glance-krm would produce.
	sec2, d2 := wired(ns, "glance", "garage-a", "garage-b")
	create(t, sec2)
	update(t, d, func() { d.Spec.Template.Spec = d2.Spec.Template.Spec })
	wantCondition(t, bb, v1alpha1.ConditionReady, T, v1alpha1.ReasonAllReady)
	c = wantCondition(t, g, v1alpha1.ConditionBackendsReady, T, v1alpha1.ReasonAllBackendsProjected)
	if !strings.Contains(c.Message, `default store "garage-a"`) {
		t.Errorf("BackendsReady message %q", c.Message)
	}

	// A second default: NoDefaultBackend naming both.
	setDefault(t, bb, true)
	c = wantCondition(t, g, v1alpha1.ConditionBackendsReady, F, v1alpha1.ReasonNoDefaultBackend)
	if !strings.Contains(c.Message, `"garage-a", "garage-b"`) || !strings.Contains(c.Message, v1alpha1.MsgExactlyOneDefault) {
		t.Errorf("NoDefaultBackend message %q", c.Message)
	}

	// One default again, but its credentials are missing: no
	// credential-ready default at all.
	setDefault(t, a, false)
	wantCondition(t, g, v1alpha1.ConditionBackendsReady, T, v1alpha1.ReasonAllBackendsProjected)
	update(t, bb, func() { bb.Spec.S3.CredentialsSecretRef.Name = "missing" })
	wantCondition(t, g, v1alpha1.ConditionBackendsReady, F, v1alpha1.ReasonNoDefaultBackend)
}

func setDefault(t *testing.T, b *v1alpha1.GlanceBackend, isDefault bool) {
	t.Helper()
	update(t, b, func() { b.Spec.IsDefault = isDefault })
}

// TestGlanceBackendSkippedEvents: a pending backend draws one Warning
// event on the Glance, naming the backend and the reason.
func TestGlanceBackendSkippedEvents(t *testing.T) {
	ns := namespace(t)
	g := glance(ns, "glance")
	create(t, g, backend(ns, "lonely", "glance", true, "nowhere"))
	wantCondition(t, g, v1alpha1.ConditionBackendsReady, F, v1alpha1.ReasonNoDefaultBackend)
	eventually(t, "a GlanceBackendSkipped event", func() error {
		var list eventsv1.EventList
		if err := k8s.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == v1alpha1.EventReasonGlanceBackendSkipped && e.Type == corev1.EventTypeWarning &&
				e.Regarding.Kind == v1alpha1.GlanceKind && e.Regarding.Name == "glance" &&
				strings.Contains(e.Note, `"lonely"`) && strings.Contains(e.Note, v1alpha1.ReasonWaitingForCredentials) {
				return nil
			}
		}
		return errNotYet(len(list.Items))
	})
}

type errNotYet int

func (n errNotYet) Error() string {
	return fmt.Sprintf("not among the namespace's %d events yet", int(n))
}

// TestTargetCluster: an unregistered target cluster is
// TargetClusterUnavailable; once a kubeconfig Secret registers it, the
// credentials are looked up on that cluster (here: the same API server,
// reached through the registration).
func TestTargetCluster(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	g := glance(ns, "glance")
	g.Spec.TargetClusterRef = &v1alpha1.ClusterRefSpec{Name: "region-two"}
	b := backend(ns, "primary", "glance", true, "s3-credentials")
	create(t, g, b, credentialsSecret(ns, "s3-credentials", "a", "s"))
	c := wantCondition(t, b, v1alpha1.ConditionCredentialsReady, F, v1alpha1.ReasonTargetClusterUnavailable)
	if !strings.Contains(c.Message, `"region-two" is not registered`) {
		t.Errorf("message %q", c.Message)
	}

	registry := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "c5c3-clusters"}}
	if err := k8s.Create(ctx, registry); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	user, err := testEnv.AddUser(envtest.User{Name: "region-two", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	reg := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "region-two", Namespace: "c5c3-clusters"},
		Data: map[string][]byte{clusters.KeyKubeconfig: kubeconfig}}
	create(t, reg)
	// Unlabelled, it is not a registration (seen at the 15 s requeue).
	wantMessage(t, b, v1alpha1.ConditionCredentialsReady, F, v1alpha1.ReasonTargetClusterUnavailable, clusters.LabelKubeconfig)
	reg.Labels = map[string]string{clusters.LabelKubeconfig: "true"}
	if err := k8s.Update(ctx, reg); err != nil {
		t.Fatal(err)
	}
	// The 15 s requeue picks the registration up.
	wantCondition(t, b, v1alpha1.ConditionCredentialsReady, T, v1alpha1.ReasonCredentialsAvailable)

	// A registration whose kubeconfig does not parse.
	reg.Data[clusters.KeyKubeconfig] = []byte("not a kubeconfig")
	if err := k8s.Update(ctx, reg); err != nil {
		t.Fatal(err)
	}
	wantMessage(t, b, v1alpha1.ConditionCredentialsReady, F, v1alpha1.ReasonTargetClusterUnavailable, "not a usable kubeconfig")
}

// TestNoStatusWriteInSteadyState: once converged, 30 s pass without a
// single status write, and lastTransitionTime stays put.
func TestNoStatusWriteInSteadyState(t *testing.T) {
	ns := namespace(t)
	g := glance(ns, "glance")
	a := backend(ns, "garage-a", "glance", true, "s3-credentials")
	sec, d := wired(ns, "glance", "garage-a")
	create(t, g, a, credentialsSecret(ns, "s3-credentials", "a", "s"), sec, d)
	before := wantCondition(t, g, v1alpha1.ConditionBackendsReady, T, v1alpha1.ReasonAllBackendsProjected)
	time.Sleep(2 * time.Second) // let stragglers of other tests settle
	writes := statusWrites.Load()
	time.Sleep(30 * time.Second)
	if n := statusWrites.Load() - writes; n != 0 {
		t.Errorf("%d status writes in 30 s of steady state, want 0", n)
	}
	after := wantCondition(t, g, v1alpha1.ConditionBackendsReady, T, v1alpha1.ReasonAllBackendsProjected)
	if !after.LastTransitionTime.Equal(&before.LastTransitionTime) {
		t.Errorf("lastTransitionTime moved from %v to %v without a flip", before.LastTransitionTime, after.LastTransitionTime)
	}
}
