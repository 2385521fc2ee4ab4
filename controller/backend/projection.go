package backend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

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
	cluster  string        // "" for the local one
	objects  client.Reader // Deployments (the manager's cache, locally: labelled ones only)
	live     client.Reader // uncached reads
	secrets  client.Reader // Secret data, never cached
	sections *sections     // rendered Secrets already parsed
}

// projection is the ConfigProjected verdict: every Image API of the
// Glance that serves this store (all of them without spec.apis; those
// whose spec.apis[].backends name it, or that name none) has a Deployment,
// and each of its Deployments, generated or hand-written, mounts a
// backends Secret whose backends.conf has the store's section and hands
// the store's credentials to the credentials init container.
func projection(ctx context.Context, r readers, g *v1alpha1.Glance, store string) (conditions.Condition, error) {
	c := conditions.Condition{Type: v1alpha1.ConditionConfigProjected, Reason: v1alpha1.ReasonWaitingForProjection}
	deployments, err := workloads(ctx, r, g)
	if err != nil || len(deployments) == 0 {
		c.Message = fmt.Sprintf("no Deployment named %q or labelled %s=%s in namespace %q", g.Name, v1alpha1.LabelGlance, g.Name, g.Namespace)
		return c, err
	}
	apis := servingAPIs(g, store)
	if len(apis) == 0 {
		c.Message = fmt.Sprintf("no API of Glance %q serves store %q (spec.apis[].backends)", g.Name, store)
		return c, nil
	}
	var judged []string
	for _, api := range apis {
		ds := deploymentsOf(g, api, deployments)
		if len(ds) == 0 {
			c.Message = fmt.Sprintf("API %q of Glance %q serves store %q but has no Deployment (named %q or labelled %s=%s)",
				api, g.Name, store, v1alpha1.APIObjectName(g.Name, api), v1alpha1.LabelAPI, api)
			return c, nil
		}
		for _, d := range ds {
			msg, err := mountsStore(ctx, r, g, d, store)
			if err != nil || msg != "" {
				c.Message = msg
				return c, err
			}
			judged = append(judged, d.Name)
		}
	}
	c.OK, c.Reason = true, v1alpha1.ReasonConfigProjected
	c.Message = fmt.Sprintf("Deployment %s mount%s section [%s] and deliver%s its credentials", strings.Join(judged, ", "), plural(judged), store, plural(judged))
	return c, nil
}

func plural(names []string) string {
	if len(names) == 1 {
		return "s"
	}
	return ""
}

// mountsStore says what is missing for one Deployment to serve the store,
// or "".
func mountsStore(ctx context.Context, r readers, g *v1alpha1.Glance, d *appsv1.Deployment, store string) (string, error) {
	pod := d.Spec.Template.Spec
	secretName := backendsSecret(pod)
	if secretName == "" {
		return fmt.Sprintf("Deployment %q mounts no backends Secret (volume %q): render it with glance-krm", d.Name, v1alpha1.VolumeConfig), nil
	}
	found, err := r.sections.read(ctx, r.cluster, r.secrets, g.Namespace, secretName)
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("Deployment %q mounts Secret %q, which does not exist", d.Name, secretName), nil
	case errors.As(err, new(parseError)):
		return fmt.Sprintf("%s of Secret %q does not parse: %v", v1alpha1.KeyBackendsConf, secretName, err), nil
	case err != nil:
		return "", err
	}
	if !found[store] {
		return fmt.Sprintf("%s of Secret %q, mounted by Deployment %q, has no [%s] section", v1alpha1.KeyBackendsConf, secretName, d.Name, store), nil
	}
	if !mountsCredentials(pod, store) {
		return fmt.Sprintf("Deployment %q does not deliver the credentials of store %q (volume %q, init container %q): render it with glance-krm", d.Name, store, v1alpha1.VolumeCredentialsIn, v1alpha1.CredentialsContainer), nil
	}
	return "", nil
}

// servingAPIs are the APIs of the Glance that serve a store.
func servingAPIs(g *v1alpha1.Glance, store string) []string {
	var out []string
	for _, a := range g.Spec.EffectiveAPIs() {
		if a.Backends == nil || slices.Contains(a.Backends, store) {
			out = append(out, a.Name)
		}
	}
	return out
}

// deploymentsOf are the Deployments that serve an API (Glance.ServedAPI,
// the rule the function wires them by).
func deploymentsOf(g *v1alpha1.Glance, api string, all []appsv1.Deployment) []*appsv1.Deployment {
	var out []*appsv1.Deployment
	for i := range all {
		if d := &all[i]; g.ServedAPI(d.Name, d.Labels[v1alpha1.LabelAPI]) == api {
			out = append(out, d)
		}
	}
	return out
}

// workloads are the Deployments the function wired or generated for the
// Glance, sorted: those labelled with its name, which is all of them
// since the function labels what it wires. A Deployment named like the
// Glance but unlabelled (wired by an earlier glance-krm) is not in the
// cache, which holds labelled Deployments only: it is read live, and only
// when no labelled one exists.
func workloads(ctx context.Context, r readers, g *v1alpha1.Glance) ([]appsv1.Deployment, error) {
	var list appsv1.DeploymentList
	if err := r.objects.List(ctx, &list, client.InNamespace(g.Namespace), client.MatchingLabels{v1alpha1.LabelGlance: g.Name}); err != nil {
		return nil, err
	}
	out := list.Items
	if len(out) == 0 {
		var d appsv1.Deployment
		err := r.live.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: g.Name}, &d)
		switch {
		case err == nil:
			out = append(out, d)
		case !apierrors.IsNotFound(err):
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b appsv1.Deployment) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
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
