package backend

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/ini.v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/glance-krm/controller/conditions"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// readers are where a Glance's objects live: the local cluster, or the
// target cluster its spec.targetClusterRef names.
type readers struct {
	objects client.Reader // Deployments (the manager's cache, locally)
	secrets client.Reader // Secret data, never cached
}

// projection is the ConfigProjected verdict: the Glance's workload mounts
// a backends Secret whose backends.conf has this store's section, and it
// hands the store's credentials to the credentials init container.
func projection(ctx context.Context, r readers, g *v1alpha1.Glance, store string) (conditions.Condition, error) {
	c := conditions.Condition{Type: v1alpha1.ConditionConfigProjected, Reason: v1alpha1.ReasonWaitingForProjection}
	d, err := workload(ctx, r.objects, g)
	if err != nil || d == nil {
		c.Message = fmt.Sprintf("no Deployment named %q or labelled %s=%s in namespace %q", g.Name, v1alpha1.LabelGlance, g.Name, g.Namespace)
		return c, err
	}
	pod := d.Spec.Template.Spec
	secretName := backendsSecret(pod)
	if secretName == "" {
		c.Message = fmt.Sprintf("Deployment %q mounts no backends Secret (volume %q): render it with glance-krm", d.Name, v1alpha1.VolumeConfig)
		return c, nil
	}
	var s corev1.Secret
	if err := r.secrets.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: secretName}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			c.Message = fmt.Sprintf("Deployment %q mounts Secret %q, which does not exist", d.Name, secretName)
			return c, nil
		}
		return c, err
	}
	conf, err := ini.Load(s.Data[v1alpha1.KeyBackendsConf])
	if err != nil {
		c.Message = fmt.Sprintf("%s of Secret %q does not parse: %v", v1alpha1.KeyBackendsConf, secretName, err)
		return c, nil
	}
	if !conf.HasSection(store) {
		c.Message = fmt.Sprintf("%s of Secret %q, mounted by Deployment %q, has no [%s] section", v1alpha1.KeyBackendsConf, secretName, d.Name, store)
		return c, nil
	}
	if !mountsCredentials(pod, store) {
		c.Message = fmt.Sprintf("Deployment %q does not deliver the credentials of store %q (volume %q, init container %q): render it with glance-krm", d.Name, store, v1alpha1.VolumeCredentialsIn, v1alpha1.CredentialsContainer)
		return c, nil
	}
	c.OK, c.Reason = true, v1alpha1.ReasonConfigProjected
	c.Message = fmt.Sprintf("Deployment %q mounts Secret %q with section [%s] and delivers its credentials", d.Name, secretName, store)
	return c, nil
}

// workload is the Deployment the function wired for the Glance: the one
// named like it, else one labelled with its name.
func workload(ctx context.Context, r client.Reader, g *v1alpha1.Glance) (*appsv1.Deployment, error) {
	var d appsv1.Deployment
	err := r.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: g.Name}, &d)
	if err == nil {
		return &d, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	var list appsv1.DeploymentList
	if err := r.List(ctx, &list, client.InNamespace(g.Namespace), client.MatchingLabels{v1alpha1.LabelGlance: g.Name}); err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	slices.SortFunc(list.Items, func(a, b appsv1.Deployment) int { return strings.Compare(a.Name, b.Name) })
	return &list.Items[0], nil
}

// backendsSecret is the Secret the pod's config volume projects next to
// the ConfigMap, or "".
func backendsSecret(pod corev1.PodSpec) string {
	i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == v1alpha1.VolumeConfig })
	if i < 0 || pod.Volumes[i].Projected == nil {
		return ""
	}
	for _, src := range pod.Volumes[i].Projected.Sources {
		if src.Secret != nil {
			return src.Secret.Name
		}
	}
	return ""
}

// mountsCredentials tells whether the pod hands this store's secret key to
// the credentials init container: its projected volume maps the key to
// the store's section.
func mountsCredentials(pod corev1.PodSpec, store string) bool {
	if !slices.ContainsFunc(pod.InitContainers, func(c corev1.Container) bool { return c.Name == v1alpha1.CredentialsContainer }) {
		return false
	}
	i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == v1alpha1.VolumeCredentialsIn })
	if i < 0 || pod.Volumes[i].Projected == nil {
		return false
	}
	want := "/" + store + "/" + v1alpha1.OptionS3SecretKey
	for _, src := range pod.Volumes[i].Projected.Sources {
		if src.Secret == nil {
			continue
		}
		for _, item := range src.Secret.Items {
			if item.Key == v1alpha1.CredentialsSecretAccessKey && strings.HasSuffix(item.Path, want) {
				return true
			}
		}
	}
	return false
}
