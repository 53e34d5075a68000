package watche2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// testConcurrentApplyCreates races ten server-side applies to create the
// same missing object, three times over. In kube the losers' creates
// fail inside GuaranteedUpdate and retry as updates of the winner's
// object, so every apply succeeds and every manager owns its field; none
// gets 409 AlreadyExists.
func testConcurrentApplyCreates(t *testing.T, _ *testserver.TestServer, cs kubernetes.Interface) {
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "apply-race")
	cms := cs.CoreV1().ConfigMaps("apply-race")
	const appliers = 10
	for round := 0; round < 3; round++ {
		name := fmt.Sprintf("raced-%d", round)
		start := make(chan struct{})
		errs := make([]error, appliers)
		var wg sync.WaitGroup
		for i := 0; i < appliers; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				key := fmt.Sprintf("k%d", i)
				_, errs[i] = cms.Apply(ctx, corev1ac.ConfigMap(name, "apply-race").WithData(map[string]string{key: "v"}),
					metav1.ApplyOptions{FieldManager: fmt.Sprintf("m%d", i)})
			}(i)
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d: apply by m%d: %v", round, i, err)
			}
		}
		got, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Data) != appliers {
			t.Errorf("round %d: data %v, want %d keys", round, got.Data, appliers)
		}
		var managers []string
		for _, e := range got.ManagedFields {
			if e.Operation != metav1.ManagedFieldsOperationApply {
				t.Errorf("round %d: %s has a %s entry", round, e.Manager, e.Operation)
			}
			managers = append(managers, e.Manager)
		}
		sort.Strings(managers)
		if want := "m0 m1 m2 m3 m4 m5 m6 m7 m8 m9"; strings.Join(managers, " ") != want {
			t.Errorf("round %d: managers %v, want %s", round, managers, want)
		}
	}
}
