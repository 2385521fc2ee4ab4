//go:build e2e

package node_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// restart rolls the Deployment (kubectl rollout restart) and waits.
func (s *scenario) restart(t *testing.T) {
	t.Helper()
	defer hold(rolloutSlots)()
	old := s.apiPods(t)
	d, err := s.n.Client.AppsV1().Deployments(s.ns).Get(context.Background(), "glance", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.n.Kubectl(nil, "-n", s.ns, "rollout", "restart", "deployment/glance"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Minute, time.Second, "the restart", func() error { return s.rolledOut(d.Generation, old) })
}

// setSecret replaces one key of a Secret.
func (s *scenario) setSecret(t *testing.T, name, key, value string) {
	t.Helper()
	sec, err := s.n.Client.CoreV1().Secrets(s.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	sec.Data[key] = []byte(value)
	if _, err := s.n.Client.CoreV1().Secrets(s.ns).Update(context.Background(), sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// rotation shows, for each credential, what a new content of its Secret
// does: nothing to the running pods (the init container wrote the
// credentials file at their start), everything to the next pod. So a
// rotation is: the new value valid on both sides, the Secret changed, a
// rollout (kubectl rollout restart), and only then the old value revoked
// (docs/credentials.md).
func (s *scenario) rotation(t *testing.T) {
	ctx, cancel := withTimeout(10 * time.Minute)
	defer cancel()
	data := randomBytes(t, 256<<10)
	// The S3 keys of the default store (secondary after the flip): a
	// wrong secret key in the Secret. The service user's password: a new
	// one (this Glance runs without Keystone: what glance reads is compared).
	const newPassword = ` new$pa%ss "q" `
	s.setSecret(t, "secondary-s3-credentials", "secret-access-key", "not-the-key")
	s.setSecret(t, "glance-service-user", "password", newPassword)
	if _, err := s.glance.roundTrip(ctx, "rotation-running", data, "secondary"); err != nil {
		t.Errorf("the running pod, after the S3 Secret changed: %v", err)
	}
	if got := s.servicePassword(t); got != sha256.Sum256([]byte(servicePassword)) {
		t.Error("the running pod's glance reads another service password than the one it started with")
	}
	s.restart(t)
	if _, err := s.glance.roundTrip(ctx, "rotation-restarted", data, "secondary"); err == nil {
		t.Error("after a restart the store with a wrong key in its Secret still took an upload")
	}
	if got := s.servicePassword(t); got != sha256.Sum256([]byte(newPassword)) {
		t.Error("after a restart glance does not read the Secret's new service password")
	}
	// The database password: wrong in the Secret.
	s.setSecret(t, "secondary-s3-credentials", "secret-access-key", s3Secret)
	s.setSecret(t, "glance-service-user", "password", servicePassword)
	s.setSecret(t, "glance-db", "password", "not-the-password")
	if _, err := s.glance.create(ctx, "rotation-db-running"); err != nil {
		t.Errorf("the running pod, after the database Secret changed: %v", err)
	}
	s.restart(t)
	short, stop := withTimeout(30 * time.Second)
	if _, err := s.glance.create(short, "rotation-db-restarted"); err == nil {
		t.Error("after a restart with a wrong database password glance still created an image")
	}
	stop()
	s.setSecret(t, "glance-db", "password", dbPassword)
	s.restart(t)
	if _, err := s.glance.roundTrip(ctx, "rotation-restored", data, "secondary"); err != nil {
		t.Errorf("after the Secrets were restored and the pods restarted: %v", err)
	}
}

// servicePassword is the SHA-256 of the [keystone_authtoken] password the
// running pod's glance reads (oslo.config on its config directories), so
// the value never leaves the pod.
func (s *scenario) servicePassword(t *testing.T) [32]byte {
	t.Helper()
	const script = `import hashlib, sys
from oslo_config import cfg
conf = cfg.ConfigOpts()
conf.register_opt(cfg.StrOpt("password", secret=True), group="keystone_authtoken")
conf([], project="glance", prog="glance-api", default_config_files=[])
sys.stdout.write(hashlib.sha256(conf.keystone_authtoken.password.encode()).hexdigest())`
	pods := s.apiPods(t)
	if len(pods) == 0 {
		t.Fatal("no API pod")
	}
	out, err := s.n.Kubectl(nil, "-n", s.ns, "exec", pods[0].Name, "-c", "glance-api", "--", "python3", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	var sum [32]byte
	if b, err := hex.DecodeString(strings.TrimSpace(string(out))); err != nil || len(b) != len(sum) {
		t.Fatalf("%q: %v", out, err)
	} else {
		copy(sum[:], b)
	}
	return sum
}

// servicePassword is the service user's password of credentials.yaml.
const servicePassword = ` pa$word ${x} %(y)s #1; "q" `

// credentialsDeleted deletes the primary store's Secret (after the flip
// the default is secondary): the controller notices at once; the running
// pods keep the credentials they started with.
func (s *scenario) credentialsDeleted(t *testing.T) {
	if err := s.n.Client.CoreV1().Secrets(s.ns).Delete(context.Background(), "primary-s3-credentials", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.waitCondition(t, "glancebackends", "primary", "CredentialsReady", metav1.ConditionFalse, "primary-s3-credentials")
}

// missingCredentials: the pods the flip started had no primary Secret to
// read: that store is disabled (410 Gone), the other works.
func (s *scenario) missingCredentials(t *testing.T) {
	ctx, cancel := withTimeout(2 * time.Minute)
	defer cancel()
	id, err := s.glance.create(ctx, "missing-credentials")
	if err != nil {
		t.Fatal(err)
	}
	var se *statusError
	if err := s.glance.upload(ctx, id, randomBytes(t, 64<<10), "primary"); !errors.As(err, &se) || se.status != http.StatusGone {
		t.Errorf("an upload to the store without credentials: %v, want 410 Gone", err)
	}
	if _, err := s.glance.roundTrip(ctx, "missing-credentials-other", randomBytes(t, 64<<10), "secondary"); err != nil {
		t.Errorf("the other store: %v", err)
	}
}
