package servere2e

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/server"
	"github.com/kpipe/kpipe/internal/server/certs"
	"github.com/kpipe/kpipe/internal/testserver"
)

// /debug/pprof is served as kube serves it, behind authentication and
// authorization: system:masters and users with an RBAC rule on the
// nonResourceURL reach it, anyone else gets 403.
func TestProfiling(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	admin := ts.HTTPClient(t)
	anon := e2eutil.RawClient(t, ts, nil)
	ca, err := certs.LoadOrCreateCA(filepath.Join(ts.StateDir, "pki"), "client-ca", "kpipe-client-ca")
	if err != nil {
		t.Fatal(err)
	}
	bob := e2eutil.RawClient(t, ts, e2eutil.IssueClientCert(t, ca, "bob", "testers"))

	t.Run("admin gets the profile index", func(t *testing.T) {
		code, body := e2eutil.Get(t, admin, ts.URL()+"/debug/pprof/")
		if code != http.StatusOK {
			t.Fatalf("GET /debug/pprof/: %d %s", code, body)
		}
		e2eutil.MustContain(t, "index", body, "Types of profiles available", "goroutine", "heap")
		code, body = e2eutil.Get(t, admin, ts.URL()+"/debug/pprof/goroutine?debug=1")
		if code != http.StatusOK {
			t.Fatalf("GET goroutine profile: %d %s", code, body)
		}
		e2eutil.MustContain(t, "goroutine profile", body, "goroutine profile: total")
	})
	t.Run("admin gets a CPU profile", func(t *testing.T) {
		code, body := e2eutil.Get(t, admin, ts.URL()+"/debug/pprof/profile?seconds=1")
		if code != http.StatusOK || len(body) == 0 {
			t.Fatalf("GET profile: %d, %d bytes", code, len(body))
		}
	})
	t.Run("/debug/pprof redirects to the index", func(t *testing.T) {
		c := *admin
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := c.Get(ts.URL() + "/debug/pprof")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/debug/pprof/" {
			t.Fatalf("got %d Location %q, want 302 to /debug/pprof/", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
	t.Run("anonymous is forbidden", func(t *testing.T) {
		code, body := e2eutil.Do(t, anon, ts, "/debug/pprof/", "")
		if code != http.StatusForbidden {
			t.Fatalf("anonymous /debug/pprof/: %d %s", code, body)
		}
		e2eutil.MustContain(t, "body", string(body), `forbidden: User \"system:anonymous\" cannot get path \"/debug/pprof/\"`)
	})
	t.Run("an authenticated user without a rule is forbidden", func(t *testing.T) {
		code, body := e2eutil.Do(t, bob, ts, "/debug/pprof/heap", "")
		if code != http.StatusForbidden {
			t.Fatalf("bob /debug/pprof/heap: %d %s", code, body)
		}
		e2eutil.MustContain(t, "body", string(body), `User \"bob\" cannot get path \"/debug/pprof/heap\"`)
	})
	t.Run("an RBAC rule on /debug/pprof/* lets a user in", func(t *testing.T) {
		cs := e2eutil.Clientset(t, ts.Config)
		ctx := context.Background()
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "profiler"},
			Rules:      []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/debug/pprof/*"}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "bob-profiler"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "profiler"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// The index is cheap: a heap dump under the race detector on a busy
		// machine can outlast the client's timeout.
		e2eutil.Eventually(t, 10*time.Second, "bob to reach /debug/pprof/", func() bool {
			code, _ := e2eutil.Do(t, bob, ts, "/debug/pprof/", "")
			return code == http.StatusOK
		})
		if code, body := e2eutil.Do(t, anon, ts, "/debug/pprof/", ""); code != http.StatusForbidden {
			t.Fatalf("anonymous after the binding: %d %s", code, body)
		}
	})
}

// With server.profiling off there is no /debug/pprof at all, as kube's
// --profiling=false: even system:masters gets 404.
func TestProfilingOff(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) { c.Server.Profiling = false }})
	code, body := e2eutil.Get(t, ts.HTTPClient(t), ts.URL()+"/debug/pprof/")
	if code != http.StatusNotFound {
		t.Fatalf("GET /debug/pprof/ with profiling off: %d %s", code, body)
	}
	// This server's etcd is external (the package's shared one), whose
	// endpoints are in the config: no etcd.endpoint file is written. Checked
	// here to spare the package another server start.
	if _, err := os.Stat(filepath.Join(ts.StateDir, server.EtcdEndpointFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat %s: %v, want no file", server.EtcdEndpointFile, err)
	}
}
