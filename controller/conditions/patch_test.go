package conditions_test

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/glance-krm/controller/conditions"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

func TestPatchStatus(t *testing.T) {
	gr := schema.GroupResource{Group: v1alpha1.Group, Resource: "glances"}
	cases := map[string]struct {
		err         error
		wantErr     bool
		wantRequeue bool
	}{
		"written":                     {},
		"gone meanwhile":              {err: apierrors.NewNotFound(gr, "g")},
		"a conflict is retried":       {err: apierrors.NewConflict(gr, "g", errors.New("modified")), wantRequeue: true},
		"another failure is an error": {err: apierrors.NewServiceUnavailable("down"), wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := &v1alpha1.Glance{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "ns"}}
			s := runtimeScheme(t)
			var sentType, sent string
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(g).WithStatusSubresource(g).WithInterceptorFuncs(interceptor.Funcs{
				SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
					data, _ := patch.Data(obj)
					sentType, sent = string(patch.Type()), string(data)
					if tc.err != nil {
						return tc.err
					}
					return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
				},
			}).Build()
			res, err := conditions.PatchStatus(context.Background(), c, g, func() { g.Status.ObservedGeneration = 7 })
			if (err != nil) != tc.wantErr || (res.RequeueAfter > 0) != tc.wantRequeue {
				t.Errorf("result %+v, error %v; want error %v, requeue %v", res, err, tc.wantErr, tc.wantRequeue)
			}
			if sentType != "application/merge-patch+json" || sent != `{"status":{"observedGeneration":7}}` {
				t.Errorf("sent %s %s: want a merge patch of the change alone, without a resourceVersion", sentType, sent)
			}
		})
	}
}

func runtimeScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}
