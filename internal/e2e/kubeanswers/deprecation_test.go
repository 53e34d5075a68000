package kubeanswers

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

const endpointsWarning = "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"

// Every request kube routes to v1 Endpoints carries its deprecation
// warning, failed ones too; a kind that is not deprecated carries none.
func TestDeprecationWarnings(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	warnings := &e2eutil.Warnings{}
	cfg := rest.CopyConfig(ts.Config)
	cfg.WarningHandler = warnings
	cs := e2eutil.Clientset(t, cfg)
	admin := kubernetes.NewForConfigOrDie(ts.Config)
	e2eutil.Namespace(t, admin, "warn")
	ctx := context.Background()
	eps := cs.CoreV1().Endpoints("warn")
	cms := cs.CoreV1().ConfigMaps("warn")
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.1.2.3"}}, Ports: []corev1.EndpointPort{{Port: 80}}}}}

	deprecated := []struct {
		name string
		call func() error
	}{
		{"create", func() error { _, err := eps.Create(ctx, ep, metav1.CreateOptions{}); return err }},
		{"get", func() error { _, err := eps.Get(ctx, "web", metav1.GetOptions{}); return err }},
		{"list", func() error { _, err := eps.List(ctx, metav1.ListOptions{}); return err }},
		{"update", func() error {
			cur, err := eps.Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			warnings.Take()
			cur.Labels = map[string]string{"a": "b"}
			_, err = eps.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		}},
		{"patch", func() error {
			_, err := eps.Patch(ctx, "web", types.MergePatchType, []byte(`{"metadata":{"labels":{"c":"d"}}}`), metav1.PatchOptions{})
			return err
		}},
		{"apply", func() error {
			_, err := eps.Patch(ctx, "web", types.ApplyYAMLPatchType,
				[]byte("apiVersion: v1\nkind: Endpoints\nmetadata: {name: web, labels: {e: f}}\n"), metav1.PatchOptions{FieldManager: "t"})
			return err
		}},
		{"watch", func() error {
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			w, err := eps.Watch(wctx, metav1.ListOptions{})
			if err == nil {
				w.Stop()
			}
			return err
		}},
		{"get of a missing one (404)", func() error {
			if _, err := eps.Get(ctx, "missing", metav1.GetOptions{}); err == nil {
				t.Error("get of a missing Endpoints succeeded")
			}
			return nil
		}},
		{"invalid create (422)", func() error {
			bad := ep.DeepCopy()
			bad.Name = "bad"
			bad.Subsets[0].Addresses[0].IP = "not-an-ip"
			if _, err := eps.Create(ctx, bad, metav1.CreateOptions{}); err == nil {
				t.Error("invalid Endpoints created")
			}
			return nil
		}},
		{"delete", func() error { return eps.Delete(ctx, "web", metav1.DeleteOptions{}) }},
		{"deletecollection", func() error { return eps.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}) }},
	}
	for _, c := range deprecated {
		t.Run("endpoints "+c.name, func(t *testing.T) {
			warnings.Take()
			if err := c.call(); err != nil {
				t.Fatal(err)
			}
			got := warnings.Take()
			if n := countOf(got, endpointsWarning); n != 1 {
				t.Errorf("warnings %q: want %q once", got, endpointsWarning)
			}
		})
	}

	plain := []struct {
		name string
		call func() error
	}{
		{"create", func() error {
			_, err := cms.Create(ctx, e2eutil.ConfigMap("cm", nil), metav1.CreateOptions{})
			return err
		}},
		{"get", func() error { _, err := cms.Get(ctx, "cm", metav1.GetOptions{}); return err }},
		{"list", func() error { _, err := cms.List(ctx, metav1.ListOptions{}); return err }},
		{"patch", func() error {
			_, err := cms.Patch(ctx, "cm", types.MergePatchType, []byte(`{"data":{"a":"b"}}`), metav1.PatchOptions{})
			return err
		}},
		{"delete", func() error { return cms.Delete(ctx, "cm", metav1.DeleteOptions{}) }},
	}
	for _, c := range plain {
		t.Run("configmaps "+c.name, func(t *testing.T) {
			warnings.Take()
			if err := c.call(); err != nil {
				t.Fatal(err)
			}
			if got := warnings.Take(); len(got) != 0 {
				t.Errorf("warnings %q for a kind that is not deprecated", got)
			}
		})
	}

	// A body that does not decode is refused by the decode stage; kube
	// warns on that answer too.
	t.Run("endpoints undecodable create (400)", func(t *testing.T) {
		c := e2eutil.MustLoopbackClient(t, ts)
		req, _ := http.NewRequest(http.MethodPost, ts.Config.Host+"/api/v1/namespaces/warn/endpoints", bytes.NewBufferString("{"))
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("code %d, want 400", resp.StatusCode)
		}
		want := `299 - "` + endpointsWarning + `"`
		if got := resp.Header.Values("Warning"); !slices.Equal(got, []string{want}) {
			t.Errorf("Warning headers %q, want %q", got, want)
		}
	})

	t.Run("kubectl get endpoints", func(t *testing.T) {
		out, err := e2eutil.Kubectl(t, ts, "get", "endpoints", "-n", "warn")
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		e2eutil.MustContain(t, "kubectl output", out, "Warning: "+endpointsWarning)
		if strings.Count(out, "Warning:") != 1 {
			t.Errorf("want one warning:\n%s", out)
		}
	})
}

func countOf(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}
