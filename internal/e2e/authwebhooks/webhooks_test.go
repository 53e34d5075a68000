package authwebhooks

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/server/certs"
	"github.com/kpipe/kpipe/internal/testserver"
)

const (
	janeToken = "jane-token"
	jane      = "jane@example.com"
	denyMsg   = "jane may not touch secrets"
)

// service answers TokenReviews on /tokenreview and SubjectAccessReviews
// on /authorize, over TLS on 127.0.0.1, and counts them.
type service struct {
	*httptest.Server
	mu     sync.Mutex
	tokens map[string]int // token -> reviews
	sars   map[string]int // "user verb resource ns" -> reviews
}

func startService(t *testing.T) *service {
	t.Helper()
	s := &service{tokens: map[string]int{}, sars: map[string]int{}}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *service) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer kpipe-to-webhook" {
		http.Error(w, "who are you", http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/tokenreview":
		var tr authenticationv1.TokenReview
		if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.tokens[tr.Spec.Token]++
		s.mu.Unlock()
		if tr.Spec.Token == janeToken {
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{
				Username: jane, UID: "42", Groups: []string{"devs"},
				Extra: map[string]authenticationv1.ExtraValue{"example.com/team": {"payments"}},
			}}
		}
		_ = json.NewEncoder(w).Encode(tr)
	case "/authorize":
		var sar authorizationv1.SubjectAccessReview
		if err := json.NewDecoder(r.Body).Decode(&sar); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ra := sar.Spec.ResourceAttributes
		key := sar.Spec.User
		if ra != nil {
			key += " " + ra.Verb + " " + ra.Resource + " " + ra.Namespace
		}
		s.mu.Lock()
		s.sars[key]++
		s.mu.Unlock()
		switch {
		case ra == nil || sar.Spec.User != jane:
		case ra.Resource == "configmaps" && ra.Namespace == "team" && slices.Contains(sar.Spec.Groups, "devs") && slices.Contains(sar.Spec.Groups, "system:authenticated") && len(sar.Spec.Extra["example.com/team"]) == 1:
			sar.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "devs read team"}
		case ra.Resource == "secrets":
			sar.Status = authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: denyMsg}
		default:
			sar.Status = authorizationv1.SubjectAccessReviewStatus{Reason: "not mine"}
		}
		_ = json.NewEncoder(w).Encode(sar)
	default:
		http.NotFound(w, r)
	}
}

func (s *service) tokenCalls(token string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens[token]
}

func (s *service) sarCalls(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sars[key]
}

// webhookKubeconfig writes the kubeconfig file the server reads: the
// service's URL and CA, and the token the server presents.
func webhookKubeconfig(t *testing.T, s *service, path string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["remote"] = &clientcmdapi.Cluster{
		Server:                   s.URL + path,
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}),
	}
	cfg.AuthInfos["kpipe"] = &clientcmdapi.AuthInfo{Token: "kpipe-to-webhook"}
	cfg.Contexts["webhook"] = &clientcmdapi.Context{Cluster: "remote", AuthInfo: "kpipe"}
	cfg.CurrentContext = "webhook"
	p := filepath.Join(t.TempDir(), strings.Trim(path, "/")+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// start runs a server whose authentication asks x509, the token webhook,
// then anonymous, and whose authorization asks the webhook, then RBAC.
func start(t *testing.T, s *service) *testserver.TestServer {
	t.Helper()
	authn := webhookKubeconfig(t, s, "/tokenreview")
	authz := webhookKubeconfig(t, s, "/authorize")
	return testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		for i, e := range c.Pipeline {
			switch e.Name {
			case "authentication":
				c.Pipeline[i].Config = map[string]any{"authenticators": []any{
					map[string]any{"name": "x509"},
					map[string]any{"name": "webhook", "config": map[string]any{"kubeConfigFile": authn, "cacheTTL": "2m"}},
					map[string]any{"name": "anonymous"},
				}}
			case "authorization":
				c.Pipeline[i].Config = map[string]any{"authorizers": []any{
					map[string]any{"name": "webhook", "config": map[string]any{"kubeConfigFile": authz}},
					map[string]any{"name": "rbac"},
				}}
			}
		}
	}})
}

func TestAuthWebhooks(t *testing.T) {
	s := startService(t)
	ts := start(t, s)
	ctx := context.Background()
	admin := e2eutil.Clientset(t, ts.Config)
	e2eutil.Namespace(t, admin, "team")
	janeCS := e2eutil.Clientset(t, e2eutil.TokenConfig(ts, janeToken))

	t.Run("kubectl auth whoami with a webhook token shows the remote user", func(t *testing.T) {
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			t.Skip("kubectl is not on PATH; this test needs the real kubectl")
		}
		out, err := exec.Command(kubectl, "--kubeconfig", e2eutil.TokenKubeconfig(t, ts, janeToken), "auth", "whoami", "-o", "json").CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl auth whoami: %v\n%s", err, out)
		}
		var ssr authenticationv1.SelfSubjectReview
		if err := json.Unmarshal(out, &ssr); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		u := ssr.Status.UserInfo
		if u.Username != jane || u.UID != "42" || !slices.Equal(u.Groups, []string{"devs", "system:authenticated"}) ||
			!slices.Equal(u.Extra["example.com/team"], []string{"payments"}) {
			t.Errorf("whoami: %+v", u)
		}
	})

	t.Run("a request only the webhook allows succeeds", func(t *testing.T) {
		if _, err := janeCS.CoreV1().ConfigMaps("team").List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatalf("jane list configmaps in team: %v", err)
		}
		// RBAC alone would refuse it: jane has no binding. When nobody
		// decides, the webhook's reason comes after its name, as in
		// kube's union.
		_, err := janeCS.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		want := `configmaps is forbidden: User "jane@example.com" cannot list resource "configmaps" in API group "" in the namespace "default": default: not mine`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Fatalf("jane list configmaps in default: %v\nwant %s", err, want)
		}
	})

	t.Run("a request the webhook denies is kube's 403 with the reason", func(t *testing.T) {
		_, err := janeCS.CoreV1().Secrets("team").List(ctx, metav1.ListOptions{})
		want := `secrets is forbidden: User "jane@example.com" cannot list resource "secrets" in API group "" in the namespace "team": ` + denyMsg
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Fatalf("got %v\nwant %s", err, want)
		}
		// Deny stops the list: once a binding makes RBAC allow secrets
		// too, the webhook's Deny still decides.
		_, err = admin.RbacV1().RoleBindings("team").Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "jane-admin"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "admin"},
			Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: jane}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e2eutil.Eventually(t, 5*time.Second, "RBAC lets jane read pods in team", func() bool {
			_, err := janeCS.CoreV1().Pods("team").List(ctx, metav1.ListOptions{})
			return err == nil
		})
		if _, err := janeCS.CoreV1().Secrets("team").Get(ctx, "x", metav1.GetOptions{}); !apierrors.IsForbidden(err) || !strings.HasSuffix(err.Error(), ": "+denyMsg) {
			t.Fatalf("get secret with an RBAC binding: %v, want the webhook's Deny", err)
		}
	})

	t.Run("cached decisions are not asked again within the TTL", func(t *testing.T) {
		listKey := jane + " list configmaps team"
		denyKey := jane + " list secrets team"
		tokens, lists, denies := s.tokenCalls(janeToken), s.sarCalls(listKey), s.sarCalls(denyKey)
		if tokens != 1 || lists != 1 || denies != 1 {
			t.Errorf("so far %d token reviews of jane's token, %d reviews of the list, %d of the denied list; want 1 each", tokens, lists, denies)
		}
		for range 3 {
			if _, err := janeCS.CoreV1().ConfigMaps("team").List(ctx, metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := janeCS.CoreV1().Secrets("team").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
				t.Fatal(err)
			}
		}
		if n := s.tokenCalls(janeToken); n != tokens {
			t.Errorf("token reviews %d -> %d, want none within cacheTTL", tokens, n)
		}
		if n := s.sarCalls(listKey); n != lists {
			t.Errorf("reviews of the allowed list %d -> %d, want none within authorizedTTL", lists, n)
		}
		if n := s.sarCalls(denyKey); n != denies {
			t.Errorf("reviews of the denied list %d -> %d, want none within unauthorizedTTL", denies, n)
		}
		code, body := e2eutil.Get(t, e2eutil.MustLoopbackClient(t, ts), ts.Config.Host+"/metrics")
		if code != http.StatusOK {
			t.Fatalf("/metrics: %d", code)
		}
		e2eutil.MustContain(t, "/metrics", body,
			`apiserver_authorization_webhook_evaluations_total{name="default",result="success"}`,
			`apiserver_authorization_webhook_duration_seconds_bucket{name="default",result="success"`,
			`authentication_token_cache_request_total{status="hit"}`)
	})

	t.Run("a webhook that is down: the authorizer falls through, a new token is 401", func(t *testing.T) {
		ca, err := certs.LoadOrCreateCA(filepath.Join(ts.StateDir, "pki"), "client-ca", "kpipe-client-ca")
		if err != nil {
			t.Fatal(err)
		}
		certPEM, keyPEM, err := ca.IssueClient("carol", nil, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		carolCfg := e2eutil.TokenConfig(ts, "")
		carolCfg.CertData, carolCfg.KeyData = certPEM, keyPEM
		carol := e2eutil.Clientset(t, carolCfg)
		if _, err := admin.RbacV1().RoleBindings("team").Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "carol-view"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "view"},
			Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "carol"}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e2eutil.Eventually(t, 5*time.Second, "RBAC lets carol read configmaps in team", func() bool {
			_, err := carol.CoreV1().ConfigMaps("team").List(ctx, metav1.ListOptions{})
			return err == nil
		})

		s.Close()

		// The webhook fails (NoOpinion with an error); RBAC allows.
		if _, err := carol.CoreV1().ConfigMaps("team").Get(ctx, "none", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("carol get configmap with the webhook down: %v, want RBAC to decide (404)", err)
		}
		// Nobody allows: the webhook's error makes it kube's plain-text
		// 500, not a 403.
		_, err = carol.CoreV1().Secrets("team").Get(ctx, "none", metav1.GetOptions{})
		if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), `Internal Server Error: \"/api/v1/namespaces/team/secrets/none\": Post`) ||
			!strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("carol get secret with the webhook down: %v, want an internal error naming the refused connection", err)
		}
		// A token the cache does not hold is 401; jane's still works
		// within cacheTTL, as in kube.
		_, err = e2eutil.Clientset(t, e2eutil.TokenConfig(ts, "new-token")).CoreV1().ConfigMaps("team").List(ctx, metav1.ListOptions{})
		if !apierrors.IsUnauthorized(err) {
			t.Fatalf("new token with the webhook down: %v, want 401", err)
		}
		if _, err := janeCS.CoreV1().ConfigMaps("team").List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatalf("jane's cached token and decision with the webhook down: %v", err)
		}
	})
}
