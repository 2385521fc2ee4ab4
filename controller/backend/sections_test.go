package backend

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

func TestSectionsReadOncePerRenderedSecret(t *testing.T) {
	immutable := true
	cases := map[string]struct {
		immutable *bool
		wantGets  int64 // for 3 rounds of 8 concurrent readers
	}{
		"an immutable rendered Secret is read once":     {&immutable, 1},
		"a mutable Secret is read again on every round": {nil, 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "g-backends-1", Namespace: "ns"}, Immutable: tc.immutable,
				Data: map[string][]byte{v1alpha1.KeyBackendsConf: []byte("[a]\ns3_store_host = x\n\n[b]\ns3_store_host = y\n")}}
			var gets atomic.Int64
			gate := make(chan struct{})
			scheme := runtime.NewScheme()
			if err := corev1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(s).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					gets.Add(1)
					<-gate // every reader of the round asks before the first answer
					return c.Get(ctx, key, obj, opts...)
				},
			}).Build()
			var cache sections
			for range 3 {
				var wg sync.WaitGroup
				results := make([]map[string]bool, 8)
				for i := range results {
					wg.Add(1)
					go func() {
						defer wg.Done()
						got, err := cache.read(context.Background(), "", c, "ns", "g-backends-1")
						if err != nil {
							t.Error(err)
						}
						results[i] = got
					}()
				}
				time.Sleep(50 * time.Millisecond) // all eight are waiting on the one read
				close(gate)
				wg.Wait()
				gate = make(chan struct{})
				for _, r := range results {
					if diff := cmp.Diff(map[string]bool{"a": true, "b": true}, r); diff != "" {
						t.Errorf("sections (-want +got):\n%s", diff)
					}
				}
			}
			if got := gets.Load(); got != tc.wantGets {
				t.Errorf("%d Secret reads, want %d", got, tc.wantGets)
			}
		})
	}
}
