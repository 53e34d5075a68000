package servere2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
)

// admissionPipeline is the default pipeline with the mutating-admission
// list replaced.
func admissionPipeline(mutating []map[string]any) []config.Entry {
	p := pipelineWith("x", true)
	list := make([]any, len(mutating))
	for i, m := range mutating {
		list[i] = m
	}
	for i := range p {
		if p[i].Name == "mutating-admission" {
			p[i].Config = map[string]any{"plugins": list}
		}
	}
	return p
}

// Turning an admission plugin off and on, and changing its config, in the
// file takes effect within seconds while requests flow, and no request
// fails because of the reloads.
func TestAdmissionPluginToggledByReload(t *testing.T) {
	rl := startReloadable(t, "x")
	cs := kubernetes.NewForConfigOrDie(rl.ts.Config)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "toggle")
	e2eutil.WaitDefaultSA(t, cs, "toggle")
	sa := map[string]any{"name": "ServiceAccount"}
	tolerations := func(seconds int) map[string]any {
		return map[string]any{"name": "DefaultTolerationSeconds", "config": map[string]any{"defaultNotReadyTolerationSeconds": seconds}}
	}
	rl.write(t, admissionPipeline([]map[string]any{sa, tolerations(300)}), nil)

	// seen is the not-ready toleration a dry-run pod create gets: its
	// seconds, or -1 without one.
	seen := func(name string) (int64, error) {
		pod, err := cs.CoreV1().Pods("toggle").Create(ctx, e2eutil.Pod(name), metav1.CreateOptions{DryRun: []string{"All"}})
		if err != nil {
			return 0, err
		}
		for _, tl := range pod.Spec.Tolerations {
			if tl.Key == corev1.TaintNodeNotReady {
				return *tl.TolerationSeconds, nil
			}
		}
		return -1, nil
	}
	var failures, total atomic.Int64
	var observed sync.Map
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				s, err := seen(fmt.Sprintf("load-%d-%d", i, n))
				total.Add(1)
				if err != nil {
					failures.Add(1)
					t.Logf("request failed: %v", err)
					continue
				}
				observed.Store(s, true)
			}
		}()
	}
	steps := []struct {
		what    string
		plugins []map[string]any
		want    int64
	}{
		{"config changed", []map[string]any{sa, tolerations(60)}, 60},
		{"plugin turned off", []map[string]any{sa, {"name": "DefaultTolerationSeconds", "enabled": false}}, -1},
		{"plugin turned on", []map[string]any{sa, tolerations(120)}, 120},
	}
	for _, s := range steps {
		start := time.Now()
		rl.write(t, admissionPipeline(s.plugins), nil)
		e2eutil.Eventually(t, 5*time.Second, s.what, func() bool {
			got, err := seen("probe")
			return err == nil && got == s.want
		})
		t.Logf("%s: visible after %v", s.what, time.Since(start))
		e2eutil.Eventually(t, 5*time.Second, "the load to see "+s.what, func() bool { _, ok := observed.Load(s.want); return ok })
	}
	close(stop)
	wg.Wait()
	if failures.Load() != 0 {
		t.Fatalf("%d of %d requests failed across reloads", failures.Load(), total.Load())
	}
	_, body := e2eutil.Get(t, rl.ts.HTTPClient(t), rl.ts.URL()+"/debug/pipeline")
	e2eutil.MustContain(t, "/debug/pipeline", body, "DefaultTolerationSeconds", "ServiceAccount")
}
