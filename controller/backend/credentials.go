package backend

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/glance-krm/controller/conditions"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// credentials is the CredentialsReady verdict: the Secret exists and both
// contract keys hold a usable value. Messages name the Secret and the key,
// never a value. A shape the Glance's release mishandles (release
// known) keeps the verdict True and says so.
func credentials(ctx context.Context, r client.Reader, namespace, name, release string) (conditions.Condition, error) {
	c := conditions.Condition{Type: v1alpha1.ConditionCredentialsReady, Reason: v1alpha1.ReasonWaitingForCredentials}
	var s corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			c.Message = fmt.Sprintf("credentials Secret %q not found in namespace %q", name, namespace)
			return c, nil
		}
		return c, err
	}
	var warnings []string
	for _, key := range []string{v1alpha1.CredentialsAccessKeyID, v1alpha1.CredentialsSecretAccessKey} {
		v, ok := s.Data[key]
		if !ok {
			c.Message = fmt.Sprintf("credentials Secret %q has no key %q", name, key)
			return c, nil
		}
		// The same words the credentials init container uses: a value it
		// refuses (a newline, CR, NUL, invalid UTF-8, or what glance_store
		// cannot put into a location URL) never reaches Glance.
		if problem := v1alpha1.S3CredentialProblem(v); problem != "" {
			c.Message = fmt.Sprintf("key %q of credentials Secret %q %s", key, name, problem)
			return c, nil
		}
		if w := v1alpha1.S3KeyShapeWarning(release, key, v); w != "" {
			warnings = append(warnings, w)
		}
	}
	c.OK, c.Reason = true, v1alpha1.ReasonCredentialsAvailable
	c.Message = fmt.Sprintf("credentials Secret %q carries %s and %s", name, v1alpha1.CredentialsAccessKeyID, v1alpha1.CredentialsSecretAccessKey)
	for _, w := range warnings {
		c.Message += "; warning: " + w
	}
	return c, nil
}
