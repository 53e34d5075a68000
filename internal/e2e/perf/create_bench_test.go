package perf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/testserver"
)

// BenchmarkCreate is the bench's create workload in-process: 1 KiB
// ConfigMaps POSTed through the whole default pipeline (x509, RBAC,
// default admission) to the shared embedded etcd, 8 requests in flight
// per core over one HTTP/2 connection. allocs/op counts the client's
// allocations too; it is steady enough to compare runs.
func BenchmarkCreate(b *testing.B) {
	ts := testserver.Start(b, testserver.Options{})
	c := ts.HTTPClient(b)
	ns := "bench"
	do := func(method, path string, body []byte) (int, []byte) {
		req, err := http.NewRequest(method, ts.URL()+path, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, out
	}
	nsBody, _ := json.Marshal(&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if code, out := do("POST", "/api/v1/namespaces", nsBody); code != http.StatusCreated {
		b.Fatalf("namespace: %d %s", code, out)
	}
	data := strings.Repeat("x", 1024)
	var n atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", n.Add(1)), Labels: map[string]string{"app": "bench"}},
				Data:       map[string]string{"data": data}}
			body, _ := json.Marshal(cm)
			if code, out := do("POST", "/api/v1/namespaces/"+ns+"/configmaps", body); code != http.StatusCreated {
				b.Errorf("create: %d %s", code, out)
				return
			}
		}
	})
}
