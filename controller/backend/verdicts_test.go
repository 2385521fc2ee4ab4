package backend

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/c5c3/glance-krm/controller/conditions"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

const ns = "openstack"

func fakeReader(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
}

func secret(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

const (
	access    = "AKIA-UNIT-ACCESS"
	secretKey = "unit-secret-value"
)

func TestCredentialsVerdict(t *testing.T) {
	cases := map[string]struct {
		objs    []client.Object
		release string
		want    conditions.Condition
	}{
		"no Secret": {
			want: conditions.Condition{Type: v1alpha1.ConditionCredentialsReady, Reason: v1alpha1.ReasonWaitingForCredentials,
				Message: `credentials Secret "s3" not found in namespace "openstack"`},
		},
		"no access-key-id": {
			objs: []client.Object{secret("s3", map[string]string{v1alpha1.CredentialsSecretAccessKey: secretKey})},
			want: conditions.Condition{Type: v1alpha1.ConditionCredentialsReady, Reason: v1alpha1.ReasonWaitingForCredentials,
				Message: `credentials Secret "s3" has no key "access-key-id"`},
		},
		"no secret-access-key": {
			objs: []client.Object{secret("s3", map[string]string{v1alpha1.CredentialsAccessKeyID: access})},
			want: conditions.Condition{Type: v1alpha1.ConditionCredentialsReady, Reason: v1alpha1.ReasonWaitingForCredentials,
				Message: `credentials Secret "s3" has no key "secret-access-key"`},
		},
		"a pasted newline": {
			objs: []client.Object{secret("s3", map[string]string{v1alpha1.CredentialsAccessKeyID: access, v1alpha1.CredentialsSecretAccessKey: secretKey + "\n"})},
			want: conditions.Condition{Type: v1alpha1.ConditionCredentialsReady, Reason: v1alpha1.ReasonWaitingForCredentials,
				Message: `key "secret-access-key" of credentials Secret "s3" ` + v1alpha1.S3CredentialProblem([]byte(secretKey+"\n"))},
		},
		"empty": {
			objs: []client.Object{secret("s3", map[string]string{v1alpha1.CredentialsAccessKeyID: "", v1alpha1.CredentialsSecretAccessKey: secretKey})},
			want: conditions.Condition{Type: v1alpha1.ConditionCredentialsReady, Reason: v1alpha1.ReasonWaitingForCredentials,
				Message: `key "access-key-id" of credentials Secret "s3" ` + v1alpha1.S3CredentialProblem(nil)},
		},
		"both keys": {
			objs: []client.Object{secret("s3", map[string]string{v1alpha1.CredentialsAccessKeyID: access, v1alpha1.CredentialsSecretAccessKey: secretKey})},
			want: conditions.Condition{Type: v1alpha1.ConditionCredentialsReady, OK: true, Reason: v1alpha1.ReasonCredentialsAvailable,
				Message: `credentials Secret "s3" carries access-key-id and secret-access-key`},
		},
		// LP #2134325: a '/' in the secret key, on the releases whose
		// location rewrite it breaks, warns; the verdict stays True.
		"a secret key with '/' on 2025.2": {
			objs:    []client.Object{secret("s3", map[string]string{v1alpha1.CredentialsAccessKeyID: access, v1alpha1.CredentialsSecretAccessKey: "unit/secret"})},
			release: "2025.2",
			want: conditions.Condition{Type: v1alpha1.ConditionCredentialsReady, OK: true, Reason: v1alpha1.ReasonCredentialsAvailable,
				Message: `credentials Secret "s3" carries access-key-id and secret-access-key; warning: ` + v1alpha1.S3KeyShapeWarning("2025.2", v1alpha1.CredentialsSecretAccessKey, []byte("/"))},
		},
		"a secret key with '/' on 2026.1": {
			objs:    []client.Object{secret("s3", map[string]string{v1alpha1.CredentialsAccessKeyID: access, v1alpha1.CredentialsSecretAccessKey: "unit/secret"})},
			release: "2026.1",
			want: conditions.Condition{Type: v1alpha1.ConditionCredentialsReady, OK: true, Reason: v1alpha1.ReasonCredentialsAvailable,
				Message: `credentials Secret "s3" carries access-key-id and secret-access-key`},
		},
		"an access key with '/' on 2025.2": {
			objs:    []client.Object{secret("s3", map[string]string{v1alpha1.CredentialsAccessKeyID: "unit/access", v1alpha1.CredentialsSecretAccessKey: secretKey})},
			release: "2025.2",
			want: conditions.Condition{Type: v1alpha1.ConditionCredentialsReady, OK: true, Reason: v1alpha1.ReasonCredentialsAvailable,
				Message: `credentials Secret "s3" carries access-key-id and secret-access-key`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := credentials(context.Background(), fakeReader(t, tc.objs...), ns, "s3", tc.release)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if strings.Contains(got.Message, access) || strings.Contains(got.Message, secretKey) || strings.Contains(got.Message, "unit/") {
				t.Errorf("the message holds a credential value: %s", got.Message)
			}
		})
	}
}

func TestReadiness(t *testing.T) {
	ok := func(typ string) conditions.Condition {
		return conditions.Condition{Type: typ, OK: true, Reason: "Fine"}
	}
	notOK := func(typ, reason string) conditions.Condition { return conditions.Condition{Type: typ, Reason: reason} }
	cases := map[string]struct {
		cred, proj conditions.Condition
		want       conditions.Condition
	}{
		"both True": {ok(v1alpha1.ConditionCredentialsReady), ok(v1alpha1.ConditionConfigProjected),
			conditions.Condition{Type: v1alpha1.ConditionReady, OK: true, Reason: v1alpha1.ReasonAllReady, Message: "credentials available and configuration projected"}},
		"credentials False": {notOK(v1alpha1.ConditionCredentialsReady, v1alpha1.ReasonWaitingForCredentials), ok(v1alpha1.ConditionConfigProjected),
			conditions.Condition{Type: v1alpha1.ConditionReady, Reason: v1alpha1.ReasonNotAllReady, Message: "CredentialsReady is False (WaitingForCredentials)"}},
		"both False": {notOK(v1alpha1.ConditionCredentialsReady, v1alpha1.ReasonWaitingForParent), notOK(v1alpha1.ConditionConfigProjected, v1alpha1.ReasonWaitingForProjection),
			conditions.Condition{Type: v1alpha1.ConditionReady, Reason: v1alpha1.ReasonNotAllReady,
				Message: "CredentialsReady is False (WaitingForParent); ConfigProjected is False (WaitingForProjection)"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, readiness(tc.cred, tc.proj)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// wiredDeployment is a Deployment as the function wires it, reduced to
// what the projection verdict reads.
func wiredDeployment(name string, labels map[string]string, backendsSecret string, credentialStores ...string) *appsv1.Deployment {
	var items []corev1.KeyToPath
	for _, s := range credentialStores {
		items = append(items, corev1.KeyToPath{Key: v1alpha1.CredentialsSecretAccessKey, Path: "optional/" + s + "/" + v1alpha1.OptionS3SecretKey})
	}
	pod := corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: v1alpha1.CredentialsContainer}},
		Containers:     []corev1.Container{{Name: v1alpha1.GlanceAPIContainer}},
		Volumes: []corev1.Volume{
			{Name: v1alpha1.VolumeConfig, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "glance-config-1"}}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: backendsSecret}}},
			}}}},
			{Name: v1alpha1.VolumeCredentialsIn, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "s3"}, Items: items}},
			}}}},
		},
	}
	if backendsSecret == "" {
		pod.Volumes = pod.Volumes[1:]
	}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: pod}}}
}

func TestProjectionVerdict(t *testing.T) {
	labelled := map[string]string{v1alpha1.LabelGlance: "glance"}
	rendered := secret("glance-backends-1", map[string]string{v1alpha1.KeyBackendsConf: "[DEFAULT]\nenabled_backends = primary:s3\n\n[primary]\ns3_store_host = https://s3\n"})
	twoAPIs := &v1alpha1.Glance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "glance"}}
	twoAPIs.Spec.APIs = []v1alpha1.GlanceAPISpec{{Name: "default", Backends: []string{"primary"}}, {Name: "internal", Backends: []string{"primary"}}}
	cases := map[string]struct {
		glance  *v1alpha1.Glance
		objs    []client.Object
		want    bool
		message string
	}{
		"no Deployment": {
			message: `no Deployment named "glance" or labelled glance.openstack.c5c3.io/glance=glance in namespace "openstack"`,
		},
		"no backends Secret mounted": {
			objs:    []client.Object{wiredDeployment("glance", labelled, "", "primary")},
			message: `Deployment "glance" mounts no backends Secret (volume "glance-krm-config"): render it with glance-krm`,
		},
		"the mounted Secret is missing": {
			objs:    []client.Object{wiredDeployment("glance", labelled, "glance-backends-1", "primary")},
			message: `Deployment "glance" mounts Secret "glance-backends-1", which does not exist`,
		},
		"no section for the store": {
			objs:    []client.Object{wiredDeployment("glance", labelled, "glance-backends-2", "primary"), secret("glance-backends-2", map[string]string{v1alpha1.KeyBackendsConf: "[other]\na = b\n"})},
			message: `backends.conf of Secret "glance-backends-2", mounted by Deployment "glance", has no [primary] section`,
		},
		"credentials not delivered": {
			objs:    []client.Object{wiredDeployment("glance", labelled, "glance-backends-1"), rendered},
			message: `Deployment "glance" does not deliver the credentials of store "primary" (volume "glance-krm-credentials-in", init container "glance-krm-credentials"): render it with glance-krm`,
		},
		"projected": {
			objs: []client.Object{wiredDeployment("glance", labelled, "glance-backends-1", "primary"), rendered},
			want: true, message: `Deployment glance mounts section [primary] and delivers its credentials`,
		},
		"an unlabelled Deployment named like the Glance (an older glance-krm)": {
			objs: []client.Object{wiredDeployment("glance", nil, "glance-backends-1", "primary"), rendered},
			want: true, message: `Deployment glance mounts section [primary] and delivers its credentials`,
		},
		"one of two APIs serving the store has no Deployment": {
			glance:  twoAPIs,
			objs:    []client.Object{wiredDeployment("glance", map[string]string{v1alpha1.LabelGlance: "glance", v1alpha1.LabelAPI: "default"}, "glance-backends-1", "primary"), rendered},
			message: `API "internal" of Glance "glance" serves store "primary" but has no Deployment (named "glance-internal" or labelled glance.openstack.c5c3.io/api=internal)`,
		},
		"both APIs serving the store project it": {
			glance: twoAPIs,
			objs: []client.Object{
				wiredDeployment("glance", map[string]string{v1alpha1.LabelGlance: "glance", v1alpha1.LabelAPI: "default"}, "glance-backends-1", "primary"),
				wiredDeployment("glance-internal", map[string]string{v1alpha1.LabelGlance: "glance", v1alpha1.LabelAPI: "internal"}, "glance-backends-1", "primary"),
				rendered,
			},
			want: true, message: `Deployment glance, glance-internal mount section [primary] and deliver its credentials`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := tc.glance
			if g == nil {
				g = &v1alpha1.Glance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "glance"}}
			}
			c := fakeReader(t, tc.objs...)
			got, err := projection(context.Background(), readers{objects: c, live: c, secrets: c, sections: &sections{}}, g, "primary")
			if err != nil {
				t.Fatal(err)
			}
			want := conditions.Condition{Type: v1alpha1.ConditionConfigProjected, OK: tc.want, Reason: v1alpha1.ReasonWaitingForProjection, Message: tc.message}
			if tc.want {
				want.Reason = v1alpha1.ReasonConfigProjected
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
