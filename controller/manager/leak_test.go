package manager_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// TestNoSecretLeaks drives the controller through every CredentialsReady
// path with Secrets whose values are unique markers, then searches every
// condition message, every event and everything the controller logged
// (at every verbosity) for them: zero hits.
func TestNoSecretLeaks(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	const access, secret = "AKIA-LEAK-MARKER-4b7e1d", "SECRET-LEAK-MARKER-93fa02"
	markers := []string{access, secret, base64.StdEncoding.EncodeToString([]byte(access)), base64.StdEncoding.EncodeToString([]byte(secret))}

	g := glance(ns, "glance")
	a := backend(ns, "garage-a", "glance", true, "creds-a")
	orphan := backend(ns, "orphan", "no-such-glance", false, "creds-a")
	sec, d := wired(ns, "glance", "garage-a")
	s := credentialsSecret(ns, "creds-a", access, secret)
	create(t, g, a, orphan, sec, d, s)
	wantCondition(t, a, v1alpha1.ConditionReady, "True", v1alpha1.ReasonAllReady)
	wantCondition(t, orphan, v1alpha1.ConditionCredentialsReady, "False", v1alpha1.ReasonWaitingForParent)

	for _, data := range []map[string][]byte{
		{v1alpha1.CredentialsAccessKeyID: []byte(access)},                                                                      // a key missing
		{v1alpha1.CredentialsAccessKeyID: []byte(access), v1alpha1.CredentialsSecretAccessKey: []byte(secret + "\n" + secret)}, // a control character
		{v1alpha1.CredentialsAccessKeyID: []byte(access + "\x00"), v1alpha1.CredentialsSecretAccessKey: []byte(secret)},
	} {
		update(t, s, func() { s.Data = data })
		wantCondition(t, a, v1alpha1.ConditionCredentialsReady, "False", v1alpha1.ReasonWaitingForCredentials)
	}
	// A target cluster that does not resolve (set at creation: the field
	// is immutable).
	remote := glance(ns, "remote")
	remote.Spec.TargetClusterRef = &v1alpha1.ClusterRefSpec{Name: "nowhere"}
	ra := backend(ns, "remote-a", "remote", true, "creds-a")
	create(t, remote, ra)
	wantCondition(t, ra, v1alpha1.ConditionCredentialsReady, "False", v1alpha1.ReasonTargetClusterUnavailable)
	wantCondition(t, remote, v1alpha1.ConditionBackendsReady, "False", v1alpha1.ReasonNoDefaultBackend)

	// The Glances aggregate (and warn) a moment after their backends.
	eventually(t, "the Glances' warnings", func() error {
		var list eventsv1.EventList
		if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return errNotYet(0)
		}
		return nil
	})
	var seen strings.Builder
	var backends v1alpha1.GlanceBackendList
	var glances v1alpha1.GlanceList
	var events eventsv1.EventList
	var legacy corev1.EventList
	for _, l := range []client.ObjectList{&backends, &glances, &events, &legacy} {
		if err := k8s.List(ctx, l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range backends.Items {
		for _, c := range b.Status.Conditions {
			seen.WriteString(c.Message + "\n")
		}
	}
	for _, g := range glances.Items {
		for _, c := range g.Status.Conditions {
			seen.WriteString(c.Message + "\n")
		}
	}
	for _, e := range events.Items {
		seen.WriteString(e.Note + "\n")
	}
	for _, e := range legacy.Items {
		seen.WriteString(e.Message + "\n")
	}
	if len(events.Items) == 0 {
		t.Error("no events were emitted, so events were not searched")
	}
	seen.WriteString(logs.String())
	for _, m := range markers {
		if n := strings.Count(seen.String(), m); n > 0 {
			t.Errorf("marker %q appears %d times in conditions, events or logs", m, n)
		}
	}
	t.Logf("searched %d bytes of condition messages, %d events and logs", seen.Len(), len(events.Items)+len(legacy.Items))
}
