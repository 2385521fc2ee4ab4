package workload

import (
	"crypto/sha256"
	_ "embed" // the drain script
	"encoding/hex"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/c5c3/glance-krm/fn/glancekrm/wire"
	"github.com/c5c3/glance-krm/fn/glancekrm/ynode"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// drainPy is the store drain (drain.py says what it does); it runs in the
// Glance's own image, on glance-api's rendered files.
//
//go:embed drain.py
var drainPy string

const (
	componentStoreDrain = "store-drain"
	// drainScriptDir is where the script's ConfigMap is mounted. The
	// volume's name is no glance-krm- one: the wiring replaces those.
	drainScriptDir    = "/var/lib/glance-krm/store-drain"
	drainVolume       = "store-drain"
	drainBackoffLimit = int32(6) // each retry resumes where the last stopped
)

// storeDrains builds the drains a Glance's backends ask for: per leaving
// store its record ConfigMap (empty: the Job writes its data) and its
// Job, after the Deployments (Argo CD's wave 2, waves.go; kpt's
// depends-on names them and the record), through the Service of the API that serves both
// stores, with that API's files; the script's ConfigMap; the service
// account that may read and write exactly the records; and, with
// spec.networkPolicy, the drain pods' policy. The Jobs carry no
// openstack-release annotation: they migrate no schema.
func (gen *generated) storeDrains(g *v1alpha1.Glance, drains []v1alpha1.StoreDrain, apis []API, deployments []string) {
	if len(drains) == 0 {
		return
	}
	script := drainScriptConfigMap(g)
	gen.add(ynode.Object(script))
	sa, role, binding := drainRBAC(g, drains)
	gen.add(ynode.Object(sa))
	gen.add(ynode.Object(role))
	gen.add(ynode.Object(binding))
	var egress []networkingv1.NetworkPolicyEgressRule
	for _, d := range drains {
		for _, a := range apis {
			if a.Resolved.Name == d.API {
				gen.add(ynode.Object(drainRecord(g, d)))
				gen.drainJob(g, d, storeDrainJob(g, d, script.Name, deployments), a.Wiring)
				egress = append(egress, drainEgress(g, d, a)...)
			}
		}
	}
	if g.Spec.NetworkPolicy != nil {
		gen.add(ynode.Object(drainNetworkPolicy(g, egress)))
	}
}

// StoreDrains is the drain objects alone, for a Glance whose workload is
// not generated (hand-written Deployments): the annotation asks for them.
func StoreDrains(g *v1alpha1.Glance, drains []v1alpha1.StoreDrain, apis []API) (fn.KubeObjects, error) {
	var gen generated
	gen.storeDrains(g, drains, apis, nil)
	return gen.objs, gen.err
}

func drainScriptConfigMap(g *v1alpha1.Glance) *corev1.ConfigMap {
	sum := sha256.Sum256([]byte(drainPy))
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: g.Name + "-" + componentStoreDrain + "-script-" + hex.EncodeToString(sum[:])[:8], Namespace: g.Namespace,
			Labels: objectLabels(g.Name, "", commonLabels(g.Name)),
		},
		Immutable: ptr.To(true),
		Data:      map[string]string{"drain.py": drainPy},
	}
}

// drainRecord is the record of one drain as the render holds it: no data
// (the Job writes it, and a GitOps engine leaves alone the fields it never
// set: Argo CD's three-way diff, Flux's server-side apply), in the first
// wave (it exists before the Job, which cannot create it). The labels are the
// ones the controller and explain find a record by; the next run replaces
// it like the generated objects (IsGenerated).
func drainRecord(g *v1alpha1.Glance, d v1alpha1.StoreDrain) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: v1alpha1.DrainRecordName(g.Name, d.From), Namespace: g.Namespace,
			Labels: map[string]string{
				v1alpha1.LabelManagedBy: v1alpha1.ManagedByGlanceKRM, v1alpha1.LabelComponent: v1alpha1.ComponentDrainRecord, v1alpha1.LabelGlance: g.Name,
			},
			Annotations: map[string]string{v1alpha1.AnnotationDrainFrom: d.From},
		},
	}
}

// drainRBAC lets the drain pods read and write their records, by name,
// and nothing else. No create: RBAC cannot limit a create to a name, so
// the render holds the records and the Job only fills them.
func drainRBAC(g *v1alpha1.Glance, drains []v1alpha1.StoreDrain) (*corev1.ServiceAccount, *rbacv1.Role, *rbacv1.RoleBinding) {
	name := g.Name + "-" + componentStoreDrain
	meta := metav1.ObjectMeta{Name: name, Namespace: g.Namespace, Labels: objectLabels(g.Name, "", commonLabels(g.Name))}
	records := make([]string, len(drains))
	for i, d := range drains {
		records[i] = v1alpha1.DrainRecordName(g.Name, d.From)
	}
	return &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta},
		&rbacv1.Role{
			TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"}, ObjectMeta: meta,
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: records, Verbs: []string{"get", "update", "patch"}},
			},
		},
		&rbacv1.RoleBinding{
			TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"}, ObjectMeta: meta,
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: g.Namespace}},
		}
}

// drainJob adds a wired drain Job, named by its store and a hash of its
// spec (v1alpha1.DrainJobName): an unchanged drain is not rerun once
// complete, a changed one (another target, new files) is. Its container
// is then told its Job's name (v1alpha1.EnvDrainJob), which the script
// writes into the record: explain lets a removal pass only with the
// record of the drain its before render holds.
func (gen *generated) drainJob(g *v1alpha1.Glance, d v1alpha1.StoreDrain, j *batchv1.Job, w wire.Wiring) {
	obj, err := w.JobPod(ynode.Object(j))
	var hash string
	if err == nil {
		hash, err = specHash(obj)
	}
	name := v1alpha1.DrainJobName(g.Name, d.From, hash)
	if err == nil {
		err = obj.SetName(name)
	}
	if err == nil {
		err = setEnv(obj, componentStoreDrain, v1alpha1.EnvDrainJob, name)
	}
	gen.add(obj, err)
}

// setEnv sets the value of a variable a container of a Job declares.
func setEnv(obj *fn.KubeObject, container, variable, value string) error {
	cs, _, err := obj.NestedSlice("spec", "template", "spec", "containers")
	if err != nil {
		return err
	}
	for _, c := range cs {
		if c.GetString("name") != container {
			continue
		}
		for _, e := range c.GetSlice("env") {
			if e.GetString("name") == variable {
				return e.SetNestedString(value, "value")
			}
		}
	}
	return fmt.Errorf("%s %s: no container %s declaring %s", obj.GetKind(), obj.GetName(), container, variable)
}

// storeDrainJob drains one store; drainJob names it.
func storeDrainJob(g *v1alpha1.Glance, d v1alpha1.StoreDrain, script string, deployments []string) *batchv1.Job {
	service := g.Name
	if len(g.Spec.APIs) > 0 {
		service = g.Name + "-" + d.API
	}
	record := v1alpha1.DrainRecordName(g.Name, d.From)
	refs := make([]string, 0, len(deployments)+1)
	for _, dep := range deployments {
		refs = append(refs, "apps/namespaces/"+g.Namespace+"/Deployment/"+dep)
	}
	refs = append(refs, "/namespaces/"+g.Namespace+"/ConfigMap/"+record)
	return &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name: v1alpha1.DrainRecordName(g.Name, d.From), Namespace: g.Namespace,
			Labels: objectLabels(g.Name, "", podLabels(g.Name, "", componentStoreDrain)),
			Annotations: map[string]string{annotationDependsOn: strings.Join(refs, ","),
				v1alpha1.AnnotationDrainFrom: d.From},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To(drainBackoffLimit),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: jobPodLabels(g.Name, componentStoreDrain)},
				Spec: jobPod(g, corev1.PodSpec{
					RestartPolicy:      corev1.RestartPolicyNever,
					ServiceAccountName: g.Name + "-" + componentStoreDrain,
					SecurityContext:    &corev1.PodSecurityContext{FSGroup: ptr.To(openStackUID)},
					Volumes: []corev1.Volume{{Name: drainVolume, VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: script}}}}},
					Containers: []corev1.Container{{
						Name: componentStoreDrain, Image: g.Spec.Image.Ref(),
						Command: []string{"python3", drainScriptDir + "/drain.py", d.From, d.To},
						Env: []corev1.EnvVar{
							{Name: "GLANCE_URL", Value: fmt.Sprintf("http://%s.%s.svc:%d", service, g.Namespace, v1alpha1.APIPort)},
							{Name: "GLANCE_KRM_GLANCE", Value: g.Name},
							{Name: "GLANCE_KRM_DRAIN_RECORD", Value: record},
							// drainJob sets it once the spec's hash names the Job.
							{Name: v1alpha1.EnvDrainJob},
							{Name: "PYTHONDONTWRITEBYTECODE", Value: "1"},
						},
						VolumeMounts:    []corev1.VolumeMount{{Name: drainVolume, MountPath: drainScriptDir, ReadOnly: true}},
						SecurityContext: restricted(),
					}},
				}),
			},
		},
	}
}

// drainNetworkPolicy lets the drain pods reach what drainEgress names;
// nothing comes in. The API's own policy admits them (networkPolicy).
func drainNetworkPolicy(g *v1alpha1.Glance, egress []networkingv1.NetworkPolicyEgressRule) *networkingv1.NetworkPolicy {
	rules := append([]networkingv1.NetworkPolicyEgressRule{dnsEgress()}, egress...)
	rules = append(rules, g.Spec.NetworkPolicy.AdditionalEgress...)
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: g.Name + "-" + componentStoreDrain, Namespace: g.Namespace, Labels: objectLabels(g.Name, "", commonLabels(g.Name))},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: drainPodSelector(g)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Egress:      compactRules(rules),
		},
	}
}

func drainPodSelector(g *v1alpha1.Glance) map[string]string {
	return map[string]string{labelAppName: appName, labelAppComponent: componentStoreDrain, v1alpha1.LabelGlance: g.Name}
}
