package accesse2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/server/certs"
	"github.com/kpipe/kpipe/internal/testserver"
)

// whoami is a test stage, listed right after authentication, that
// answers GET /whoami with the request's user.
func registerWhoami(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name: "whoami", Kind: pipeline.KindStage,
		New: func(any) (any, error) {
			return pipeline.Middleware(func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/whoami" {
						next.ServeHTTP(w, r)
						return
					}
					u, _ := request.UserFrom(r.Context())
					w.Header().Set("Content-Type", "application/json")
					_ = json.NewEncoder(w).Encode(u)
				})
			}), nil
		},
	})
}

// startAuthn starts a server whose authentication stage lists x509,
// token-file (tokens) and anonymous, with whoami after it.
func startAuthn(t *testing.T, tokens string) *testserver.TestServer {
	t.Helper()
	return testserver.Start(t, testserver.Options{
		Register: registerWhoami,
		Configure: func(c *config.Config) {
			var p []config.Entry
			for _, e := range c.Pipeline {
				if e.Name == "authentication" {
					e.Config = map[string]any{"authenticators": []any{
						map[string]any{"name": "x509"},
						map[string]any{"name": "token-file", "config": map[string]any{"tokenAuthFile": tokens}},
						map[string]any{"name": "anonymous"},
					}}
					p = append(p, e, config.Entry{Name: "whoami"})
					continue
				}
				p = append(p, e)
			}
			c.Pipeline = p
		},
	})
}

func whoami(t *testing.T, c *http.Client, ts *testserver.TestServer, token string) request.User {
	t.Helper()
	code, body := e2eutil.Do(t, c, ts, "/whoami", token)
	if code != http.StatusOK {
		t.Fatalf("/whoami: %d %s", code, body)
	}
	var u request.User
	if err := json.Unmarshal(body, &u); err != nil {
		t.Fatalf("/whoami %s: %v", body, err)
	}
	return u
}

func wantUser(t *testing.T, u request.User, name string, groups ...string) {
	t.Helper()
	if u.Name != name || !reflect.DeepEqual(u.Groups, groups) {
		t.Errorf("user = %q %v, want %q %v", u.Name, u.Groups, name, groups)
	}
}

func wantUnauthorized(t *testing.T, code int, body []byte) {
	t.Helper()
	if code != http.StatusUnauthorized {
		t.Fatalf("code = %d, want 401: %s", code, body)
	}
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	if st.Kind != "Status" || st.Reason != metav1.StatusReasonUnauthorized || st.Message != "Unauthorized" {
		t.Errorf("status = %+v", st)
	}
}

func TestAuthn(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte("# token,user,uid,groups\nfirst-token,alice,uid-alice,\"devs,ops\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := startAuthn(t, tokens)
	anon := e2eutil.RawClient(t, ts, nil)

	t.Run("admin kubeconfig authenticates by client certificate", func(t *testing.T) {
		c := ts.HTTPClient(t)
		resp, err := c.Get(ts.URL() + "/whoami")
		if err != nil {
			t.Fatal(err)
		}
		var u request.User
		err = json.NewDecoder(resp.Body).Decode(&u)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		wantUser(t, u, "kubernetes-admin", request.SystemPrivileged, request.AllAuthenticated)
		if code, body := e2eutil.Get(t, c, ts.URL()+"/api/v1/namespaces"); code != http.StatusOK {
			t.Errorf("admin list namespaces: %d %s", code, body)
		}
	})
	t.Run("client certificate of the client CA", func(t *testing.T) {
		ca, err := certs.LoadOrCreateCA(filepath.Join(ts.StateDir, "pki"), "client-ca", "kpipe-client-ca")
		if err != nil {
			t.Fatal(err)
		}
		u := whoami(t, e2eutil.RawClient(t, ts, e2eutil.IssueClientCert(t, ca, "bob", "testers")), ts, "")
		wantUser(t, u, "bob", "testers", request.AllAuthenticated)
	})
	t.Run("client certificate of an unknown CA is 401", func(t *testing.T) {
		other, err := certs.LoadOrCreateCA(t.TempDir(), "ca", "stranger")
		if err != nil {
			t.Fatal(err)
		}
		c := e2eutil.RawClient(t, ts, e2eutil.IssueClientCert(t, other, "kubernetes-admin", "system:masters"))
		code, body := e2eutil.Do(t, c, ts, "/version", "")
		wantUnauthorized(t, code, body)
	})
	t.Run("token from the token file", func(t *testing.T) {
		if code, body := e2eutil.Do(t, anon, ts, "/version", "first-token"); code != http.StatusOK {
			t.Fatalf("/version with a token: %d %s", code, body)
		}
		wantUser(t, whoami(t, anon, ts, "first-token"), "alice", "devs", "ops", request.AllAuthenticated)
	})
	t.Run("unknown token is 401, not anonymous", func(t *testing.T) {
		code, body := e2eutil.Do(t, anon, ts, "/readyz", "nobody-knows-me")
		wantUnauthorized(t, code, body)
	})
	t.Run("editing the token file takes effect without a restart", func(t *testing.T) {
		if err := os.WriteFile(tokens, []byte("second-token,carol,uid-carol\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		e2eutil.Eventually(t, 10*time.Second, "the new token to work", func() bool {
			code, _ := e2eutil.Do(t, anon, ts, "/version", "second-token")
			return code == http.StatusOK
		})
		wantUser(t, whoami(t, anon, ts, "second-token"), "carol", request.AllAuthenticated)
		code, body := e2eutil.Do(t, anon, ts, "/version", "first-token")
		wantUnauthorized(t, code, body)
	})
	t.Run("anonymous reaches readyz", func(t *testing.T) {
		if code, body := e2eutil.Do(t, anon, ts, "/readyz", ""); code != http.StatusOK {
			t.Fatalf("anonymous /readyz: %d %s", code, body)
		}
		wantUser(t, whoami(t, anon, ts, ""), request.Anonymous, request.AllUnauthenticated)
	})
	t.Run("loopback client", func(t *testing.T) {
		c, err := rest.HTTPClientFor(ts.Loopback())
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Get(ts.URL() + "/whoami")
		if err != nil {
			t.Fatal(err)
		}
		var u request.User
		err = json.NewDecoder(resp.Body).Decode(&u)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		wantUser(t, u, request.APIServerUser, request.SystemPrivileged, request.AllAuthenticated)
	})
	t.Run("metrics", func(t *testing.T) {
		_, m := e2eutil.Get(t, ts.HTTPClient(t), ts.URL()+"/metrics")
		e2eutil.MustContain(t, "/metrics", m, `authentication_attempts{result="success"}`,
			`authentication_attempts{result="failure"}`, `authentication_attempts{result="error"}`,
			`authentication_duration_seconds_bucket{result="success",le="0.001"}`)
	})
}
