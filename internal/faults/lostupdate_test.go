package faults

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/testserver"
)

const (
	counterWorkers = 20
	incrementsEach = 5
)

func fastClient(t *testing.T, ts *testserver.TestServer) kubernetes.Interface {
	t.Helper()
	cfg := *ts.Config
	cfg.QPS, cfg.Burst = -1, -1 // the test is the load; no client-side throttle
	return kubernetes.NewForConfigOrDie(&cfg)
}

// Twenty workers increment one counter with read-modify-write, retrying on
// 409 Conflict. Optimistic concurrency must lose no increment: the final
// count equals the number of updates that got a 2xx.
func TestLostUpdatesReadModifyWrite(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	cs := fastClient(t, ts)
	ctx := context.Background()
	namespace(t, cs, "counter")
	cms := cs.CoreV1().ConfigMaps("counter")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var ok, conflicts atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, counterWorkers)
	for w := 0; w < counterWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < incrementsEach; {
				cm, err := cms.Get(ctx, "c", metav1.GetOptions{})
				if err != nil {
					errs <- err
					return
				}
				n, _ := strconv.Atoi(cm.Data["n"])
				cm.Data["n"] = strconv.Itoa(n + 1)
				_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
				switch {
				case err == nil:
					ok.Add(1)
					i++
				case apierrors.IsConflict(err):
					conflicts.Add(1)
				default:
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("update: %v", err)
	}
	cm, err := cms.Get(ctx, "c", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := strconv.Atoi(cm.Data["n"])
	if int64(got) != ok.Load() || got != counterWorkers*incrementsEach {
		t.Errorf("counter is %d after %d successful updates (want %d)", got, ok.Load(), counterWorkers*incrementsEach)
	}
	t.Logf("%d workers: %d updates acknowledged, %d conflicts retried, final count %d", counterWorkers, ok.Load(), conflicts.Load(), got)
}

// The same load as patches, which the server applies to the live object
// itself: no 409 reaches the client and no key is lost. Each patch adds
// its own key, in turn as a merge, strategic merge and JSON patch.
func TestLostUpdatesPatch(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	cs := fastClient(t, ts)
	ctx := context.Background()
	namespace(t, cs, "patches")
	cms := cs.CoreV1().ConfigMaps("patches")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"seed": "0"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var ok, timeouts atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, counterWorkers*incrementsEach)
	for w := 0; w < counterWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < incrementsEach; i++ {
				key := fmt.Sprintf("w%d-%d", w, i)
				var pt types.PatchType
				var body string
				switch i % 3 {
				case 0:
					pt, body = types.MergePatchType, fmt.Sprintf(`{"data":{%q:"1"}}`, key)
				case 1:
					pt, body = types.StrategicMergePatchType, fmt.Sprintf(`{"data":{%q:"1"}}`, key)
				default:
					pt, body = types.JSONPatchType, fmt.Sprintf(`[{"op":"add","path":"/data/%s","value":"1"}]`, key)
				}
				if _, err := cms.Patch(ctx, "c", pt, []byte(body), metav1.PatchOptions{}); err != nil {
					if apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
						// No answer: the patch may or may not have landed.
						timeouts.Add(1)
						continue
					}
					errs <- fmt.Errorf("%s patch %s: %w", pt, key, err)
					continue
				}
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("patch: %v", err)
	}
	cm, err := cms.Get(ctx, "c", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Every acknowledged patch is there; a timed-out one may be too.
	if got := int64(len(cm.Data) - 1); got < ok.Load() || got > ok.Load()+timeouts.Load() {
		t.Errorf("%d keys after %d successful patches and %d timeouts", got, ok.Load(), timeouts.Load())
	}
	t.Logf("%d workers: %d patches acknowledged, %d timed out, %d keys present", counterWorkers, ok.Load(), timeouts.Load(), len(cm.Data)-1)
}
