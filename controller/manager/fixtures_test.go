package manager_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := k8s.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func glance(ns, name string) *v1alpha1.Glance {
	return &v1alpha1.Glance{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.GlanceSpec{
			OpenStackRelease: "2025.2",
			Image:            v1alpha1.ImageSpec{Repository: "ghcr.io/c5c3/glance", Tag: "2025.2"},
			KeystoneEndpoint: "http://keystone:5000/v3",
			ServiceUser:      v1alpha1.ServiceUserSpec{SecretRef: v1alpha1.PasswordSecretRefSpec{Name: "glance-service-user"}},
			Database:         v1alpha1.DatabaseSpec{Host: "mariadb", Database: "glance", SecretRef: v1alpha1.SecretRefSpec{Name: "glance-db"}},
			Cache:            v1alpha1.CacheSpec{Servers: []string{"memcached:11211"}},
		},
	}
}

func backend(ns, name, glanceName string, isDefault bool, secret string) *v1alpha1.GlanceBackend {
	return &v1alpha1.GlanceBackend{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.GlanceBackendSpec{
			GlanceRef: v1alpha1.GlanceRefSpec{Name: glanceName}, Type: v1alpha1.GlanceBackendTypeS3, IsDefault: isDefault,
			S3: &v1alpha1.S3BackendSpec{Host: "http://s3:9000", Bucket: "b-" + name,
				CredentialsSecretRef: v1alpha1.SecretNameRefSpec{Name: secret}},
		},
	}
}

func credentialsSecret(ns, name, access, secret string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string][]byte{
		v1alpha1.CredentialsAccessKeyID: []byte(access), v1alpha1.CredentialsSecretAccessKey: []byte(secret),
	}}
}

// wired is what glance-krm renders for a Glance and its stores: the
// backends Secret and the Deployment mounting it, handing each store's
// credentials to the credentials init container.
func wired(ns, glanceName string, stores ...string) (*corev1.Secret, *appsv1.Deployment) {
	conf := "# rendered\n"
	var sources []corev1.VolumeProjection
	for _, s := range stores {
		conf += fmt.Sprintf("[%s]\ns3_store_host = http://s3:9000\ns3_store_bucket = b-%s\n\n", s, s)
		sources = append(sources, corev1.VolumeProjection{Secret: &corev1.SecretProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: s + "-creds"},
			Items:                []corev1.KeyToPath{{Key: v1alpha1.CredentialsSecretAccessKey, Path: "optional/" + s + "/" + v1alpha1.OptionS3SecretKey}},
		}})
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-backends-%010d", glanceName, len(stores)), Namespace: ns,
			Labels: map[string]string{v1alpha1.LabelGlance: glanceName, v1alpha1.LabelComponent: v1alpha1.ComponentBackends}},
		Data: map[string][]byte{v1alpha1.KeyBackendsConf: []byte(conf)},
	}
	labels := map[string]string{"app": glanceName}
	d := &appsv1.Deployment{
		// Labelled with its Glance, as the function labels every workload
		// it wires (the controller caches only those).
		ObjectMeta: metav1.ObjectMeta{Name: glanceName, Namespace: ns, Labels: map[string]string{v1alpha1.LabelGlance: glanceName}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					InitContainers: []corev1.Container{{Name: v1alpha1.CredentialsContainer, Image: "glance-krm-fn"}},
					Containers:     []corev1.Container{{Name: v1alpha1.GlanceAPIContainer, Image: "glance"}},
					Volumes: []corev1.Volume{
						{Name: v1alpha1.VolumeConfig, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
							{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: glanceName + "-config-0000000000"}}},
							{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: sec.Name}}},
						}}}},
						{Name: v1alpha1.VolumeCredentialsIn, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: sources}}},
					},
				},
			},
		},
	}
	return sec, d
}

// condition reads one condition of a backend or a Glance.
func condition(t *testing.T, obj client.Object, typ string) (*metav1.Condition, error) {
	t.Helper()
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		return nil, err
	}
	var conds []metav1.Condition
	var gen, observed int64 = obj.GetGeneration(), 0
	switch o := obj.(type) {
	case *v1alpha1.GlanceBackend:
		conds, observed = o.Status.Conditions, o.Status.ObservedGeneration
	case *v1alpha1.Glance:
		conds, observed = o.Status.Conditions, o.Status.ObservedGeneration
	}
	c := meta.FindStatusCondition(conds, typ)
	if c == nil {
		return nil, fmt.Errorf("no %s condition yet", typ)
	}
	if observed != gen || c.ObservedGeneration != gen {
		return nil, fmt.Errorf("%s describes generation %d, want %d", typ, c.ObservedGeneration, gen)
	}
	return c, nil
}

// wantCondition waits until the condition has this status and reason.
func wantCondition(t *testing.T, obj client.Object, typ string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	var got *metav1.Condition
	eventually(t, fmt.Sprintf("%s %s: %s=%s/%s", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), typ, status, reason), func() error {
		c, err := condition(t, obj, typ)
		if err != nil {
			return err
		}
		if c.Status != status || c.Reason != reason {
			return fmt.Errorf("is %s/%s: %s", c.Status, c.Reason, c.Message)
		}
		got = c
		return nil
	})
	return got
}

// wantMessage waits until the condition also carries this text.
func wantMessage(t *testing.T, obj client.Object, typ string, status metav1.ConditionStatus, reason, text string) {
	t.Helper()
	eventually(t, fmt.Sprintf("%s %s: %s=%s/%s mentioning %q", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), typ, status, reason, text), func() error {
		c, err := condition(t, obj, typ)
		if err != nil {
			return err
		}
		if c.Status != status || c.Reason != reason || !strings.Contains(c.Message, text) {
			return fmt.Errorf("is %s/%s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
}

// update applies a change to the latest version of obj, retrying on the
// conflicts the controller's own status writes cause.
func update(t *testing.T, obj client.Object, change func()) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return k8s.Update(context.Background(), obj)
	})
	if err != nil {
		t.Fatal(err)
	}
}
