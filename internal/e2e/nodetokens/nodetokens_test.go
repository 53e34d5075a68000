package nodetokens

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
	"github.com/kpipe/kpipe/plugins/audit"
)

// tokenCacheTTL is the service-account authenticator's cacheTTL here:
// short, so a revocation is seen quickly, and long enough that a request
// right after a deletion is still inside it on a loaded machine.
const tokenCacheTTL = 3 * time.Second

const ns = "node-tokens"

// startServer starts a server whose service-account authenticator caches
// successes for tokenCacheTTL, and which audits TokenRequests at the
// Metadata level into the returned log.
func startServer(t *testing.T) (*testserver.TestServer, string) {
	logPath := filepath.Join(t.TempDir(), "audit.log")
	ts := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		for i, e := range c.Pipeline {
			switch e.Name {
			case "authentication":
				c.Pipeline[i].Config = map[string]any{"authenticators": []any{
					map[string]any{"name": "x509"},
					map[string]any{"name": "service-account", "config": map[string]any{"cacheTTL": tokenCacheTTL.String()}},
				}}
			case "audit":
				c.Pipeline[i].Config = map[string]any{"logPath": logPath, "policy": map[string]any{
					"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": []any{"RequestReceived"},
					"rules": []any{
						map[string]any{"level": "Metadata", "resources": []any{map[string]any{"group": "", "resources": []any{"serviceaccounts/token"}}}},
						map[string]any{"level": "None"},
					},
				}}
			}
		}
	}})
	return ts, logPath
}

// kubectlToken runs `kubectl create token` as the admin.
func kubectlToken(t *testing.T, ts *testserver.TestServer, sa string, args ...string) (string, error) {
	t.Helper()
	out, err := e2eutil.Kubectl(t, ts, append([]string{"create", "token", sa, "-n", ns}, args...)...)
	return strings.TrimSpace(out), err
}

type ref struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// claims are what a test reads of a token's payload.
type claims struct {
	ID         string `json:"jti"`
	Kubernetes struct {
		Namespace      string `json:"namespace"`
		ServiceAccount ref    `json:"serviceaccount"`
		Pod            *ref   `json:"pod"`
		Secret         *ref   `json:"secret"`
		Node           *ref   `json:"node"`
	} `json:"kubernetes.io"`
}

// payload decodes a JWT's claims without verifying it.
func payload(t *testing.T, token string) claims {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("%q is not a JWT", token)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c claims
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("claims %s: %v", raw, err)
	}
	return c
}

// whoami is the user a token authenticates as (SelfSubjectReview).
func whoami(ts *testserver.TestServer, token string) (authenticationv1.UserInfo, error) {
	cs, err := kubernetes.NewForConfig(e2eutil.TokenConfig(ts, token))
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	return r.Status.UserInfo, nil
}

// tokenReview is the admin's TokenReview of token.
func tokenReview(t *testing.T, admin kubernetes.Interface, token string) authenticationv1.TokenReviewStatus {
	t.Helper()
	r, err := admin.AuthenticationV1().TokenReviews().Create(context.Background(), &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Status
}

func wantExtra(t *testing.T, ui authenticationv1.UserInfo, want map[string]string, absent ...string) {
	t.Helper()
	for k, v := range want {
		if got := ui.Extra[k]; !slices.Equal(got, []string{v}) {
			t.Errorf("extra[%s] = %v, want [%s]", k, got, v)
		}
	}
	for _, k := range absent {
		if got, ok := ui.Extra[k]; ok {
			t.Errorf("extra[%s] = %v, want none", k, got)
		}
	}
}

func createNode(t *testing.T, admin kubernetes.Interface, name string) *corev1.Node {
	t.Helper()
	n, err := admin.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func deleteNode(t *testing.T, admin kubernetes.Interface, name string) {
	t.Helper()
	if err := admin.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// auditedCredentialIDs are the issued-credential-id annotations of the
// TokenRequests of service account sa audited so far.
func auditedCredentialIDs(t *testing.T, path, sa string) []string {
	t.Helper()
	var ids []string
	for _, ev := range e2eutil.AuditEvents(t, path) {
		r := ev.ObjectRef
		if ev.Stage == audit.StageResponseComplete && r != nil && r.Resource == "serviceaccounts" && r.Subresource == "token" && r.Name == sa {
			if id, ok := ev.Annotations["authentication.kubernetes.io/issued-credential-id"]; ok {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// TestNodeBoundTokens shares one server between its parts: each server
// start costs the whole package time.
func TestNodeBoundTokens(t *testing.T) {
	ts, auditPath := startServer(t)
	admin := e2eutil.Clientset(t, ts.Config)
	e2eutil.Namespace(t, admin, ns)
	sa, err := admin.CoreV1().ServiceAccounts(ns).Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "agent"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("kubectl create token bound to a node", func(t *testing.T) { testIssue(t, ts, admin, sa, auditPath) })
	t.Run("refusals", func(t *testing.T) { testRefusals(t, ts, admin) })
	t.Run("pod-bound tokens carry their node and do not depend on it", func(t *testing.T) { testPodNode(t, ts, admin) })
	t.Run("refused once the node is deleted or recreated", func(t *testing.T) { testRevocation(t, ts, admin) })
}

func testIssue(t *testing.T, ts *testserver.TestServer, admin kubernetes.Interface, sa *corev1.ServiceAccount, auditPath string) {
	node := createNode(t, admin, "worker-1")
	token, err := kubectlToken(t, ts, "agent", "--bound-object-kind", "Node", "--bound-object-name", "worker-1")
	if err != nil {
		t.Fatalf("kubectl create token --bound-object-kind Node: %v\n%s", err, token)
	}
	c := payload(t, token)
	k := c.Kubernetes
	if k.Node == nil || *k.Node != (ref{Name: "worker-1", UID: string(node.UID)}) {
		t.Errorf("node claim = %+v, want worker-1 uid %s", k.Node, node.UID)
	}
	if k.Pod != nil || k.Secret != nil {
		t.Errorf("a node-bound token names a pod %+v or a secret %+v", k.Pod, k.Secret)
	}
	if k.Namespace != ns || k.ServiceAccount != (ref{Name: "agent", UID: string(sa.UID)}) || c.ID == "" {
		t.Errorf("claims = %+v", c)
	}

	// It authenticates as the service account, with the node in its
	// user's extra, as kube sets it.
	ui, err := whoami(ts, token)
	if err != nil {
		t.Fatalf("SelfSubjectReview with the node-bound token: %v", err)
	}
	if ui.Username != "system:serviceaccount:"+ns+":agent" || ui.UID != string(sa.UID) {
		t.Errorf("user = %+v", ui)
	}
	wantExtra(t, ui, map[string]string{
		"authentication.kubernetes.io/node-name":     "worker-1",
		"authentication.kubernetes.io/node-uid":      string(node.UID),
		"authentication.kubernetes.io/credential-id": "JTI=" + c.ID,
	}, "authentication.kubernetes.io/pod-name", "authentication.kubernetes.io/pod-uid")

	// Its UID given explicitly, as kubectl's --bound-object-uid.
	token, err = kubectlToken(t, ts, "agent", "--bound-object-kind", "Node", "--bound-object-name", "worker-1", "--bound-object-uid", string(node.UID))
	if err != nil {
		t.Fatalf("kubectl create token --bound-object-uid: %v\n%s", err, token)
	}
	if n := payload(t, token).Kubernetes.Node; n == nil || n.UID != string(node.UID) {
		t.Errorf("node claim with --bound-object-uid = %+v", n)
	}

	// The TokenRequest's audit event names the token it issued.
	e2eutil.Eventually(t, 10*time.Second, "the TokenRequest's audit event with its issued-credential-id", func() bool {
		return slices.Contains(auditedCredentialIDs(t, auditPath, "agent"), "JTI="+c.ID)
	})
}

func testRefusals(t *testing.T, ts *testserver.TestServer, admin kubernetes.Interface) {
	ctx := context.Background()
	node := createNode(t, admin, "worker-r")

	// kubectl shows kube's messages.
	out, err := kubectlToken(t, ts, "agent", "--bound-object-kind", "Node", "--bound-object-name", "nope")
	if err == nil {
		t.Fatalf("a token bound to a missing node was issued: %s", out)
	}
	e2eutil.MustContain(t, "kubectl create token for a missing node", out, `nodes "nope" not found`)
	out, err = kubectlToken(t, ts, "agent", "--bound-object-kind", "Node", "--bound-object-name", "worker-r", "--bound-object-uid", "0d4691ed-659b-4935-a832-355f77ee47cc")
	if err == nil {
		t.Fatalf("a token bound to a node of another uid was issued: %s", out)
	}
	e2eutil.MustContain(t, "kubectl create token for another uid", out,
		`Operation cannot be fulfilled on Node "worker-r": the UID in the bound object reference (0d4691ed-659b-4935-a832-355f77ee47cc) does not match the UID in record. The object might have been deleted and then recreated`)

	// client-go sees kube's Statuses.
	tr := func(ref *authenticationv1.BoundObjectReference) error {
		_, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "agent", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: ref}}, metav1.CreateOptions{})
		return err
	}
	e2eutil.WantStatus(t, tr(&authenticationv1.BoundObjectReference{Kind: "Node", APIVersion: "v1", Name: "nope"}), 404, metav1.StatusReasonNotFound, `nodes "nope" not found`)
	e2eutil.WantStatus(t, tr(&authenticationv1.BoundObjectReference{Kind: "Node", APIVersion: "v1", Name: "worker-r", UID: "other"}), 409, metav1.StatusReasonConflict,
		`Operation cannot be fulfilled on Node "worker-r": the UID in the bound object reference (other) does not match the UID in record. The object might have been deleted and then recreated`)
	e2eutil.WantStatus(t, tr(&authenticationv1.BoundObjectReference{Kind: "ConfigMap", APIVersion: "v1", Name: "c"}), 400, metav1.StatusReasonBadRequest,
		"cannot bind token to object of type /v1, Kind=ConfigMap")
	e2eutil.WantStatus(t, tr(&authenticationv1.BoundObjectReference{Kind: "Node", APIVersion: "apps/v1", Name: "worker-r"}), 400, metav1.StatusReasonBadRequest,
		"cannot bind token to object of type apps/v1, Kind=Node")
	if err := tr(&authenticationv1.BoundObjectReference{Kind: "Node", APIVersion: "v1", Name: "worker-r", UID: node.UID}); err != nil {
		t.Errorf("the node's own uid: %v", err)
	}
}

func testPodNode(t *testing.T, ts *testserver.TestServer, admin kubernetes.Interface) {
	ctx := context.Background()
	node := createNode(t, admin, "worker-2")
	pod, err := admin.CoreV1().Pods(ns).Create(ctx, e2eutil.Pod("runner", func(p *corev1.Pod) {
		p.Spec.ServiceAccountName = "agent"
		p.Spec.NodeName = "worker-2"
	}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token, err := kubectlToken(t, ts, "agent", "--bound-object-kind", "Pod", "--bound-object-name", "runner")
	if err != nil {
		t.Fatalf("kubectl create token --bound-object-kind Pod: %v\n%s", err, token)
	}
	k := payload(t, token).Kubernetes
	if k.Pod == nil || k.Pod.UID != string(pod.UID) || k.Node == nil || *k.Node != (ref{Name: "worker-2", UID: string(node.UID)}) {
		t.Fatalf("pod-bound token's claims: pod %+v node %+v", k.Pod, k.Node)
	}
	podAndNode := map[string]string{
		"authentication.kubernetes.io/pod-name":  "runner",
		"authentication.kubernetes.io/pod-uid":   string(pod.UID),
		"authentication.kubernetes.io/node-name": "worker-2",
		"authentication.kubernetes.io/node-uid":  string(node.UID),
	}
	ui, err := whoami(ts, token)
	if err != nil {
		t.Fatal(err)
	}
	wantExtra(t, ui, podAndNode)

	// A second token, first used after the node is gone, so no cached
	// success answers for it: kube checks the pod of a pod-bound token,
	// not its node, which the extra still reports.
	late, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "agent", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "runner", UID: pod.UID}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deleteNode(t, admin, "worker-2")
	ui, err = whoami(ts, late.Status.Token)
	if err != nil {
		t.Fatalf("pod-bound token after its node was deleted: %v", err)
	}
	wantExtra(t, ui, podAndNode)

	// A token for a pod whose node is gone names the node without a uid.
	token, err = kubectlToken(t, ts, "agent", "--bound-object-kind", "Pod", "--bound-object-name", "runner")
	if err != nil {
		t.Fatalf("kubectl create token for a pod on a deleted node: %v\n%s", err, token)
	}
	if n := payload(t, token).Kubernetes.Node; n == nil || *n != (ref{Name: "worker-2"}) {
		t.Errorf("node claim of a pod on a deleted node = %+v, want the name alone", n)
	}
	ui, err = whoami(ts, token)
	if err != nil {
		t.Fatal(err)
	}
	wantExtra(t, ui, map[string]string{"authentication.kubernetes.io/node-name": "worker-2"}, "authentication.kubernetes.io/node-uid")
}

func testRevocation(t *testing.T, ts *testserver.TestServer, admin kubernetes.Interface) {
	old := createNode(t, admin, "worker-3")
	token, err := kubectlToken(t, ts, "agent", "--bound-object-kind", "Node", "--bound-object-name", "worker-3")
	if err != nil {
		t.Fatalf("kubectl create token: %v\n%s", err, token)
	}
	// Cached from here on: the entry's start is no earlier than cached.
	cached := time.Now()
	if _, err := whoami(ts, token); err != nil {
		t.Fatal(err)
	}
	deleteNode(t, admin, "worker-3")
	if _, err := whoami(ts, token); err != nil && time.Since(cached) < tokenCacheTTL/2 {
		t.Errorf("token right after its node was deleted: %v; want it still cached", err)
	}
	e2eutil.Eventually(t, tokenCacheTTL+10*time.Second, "the deleted node's token to be refused", func() bool {
		_, err := whoami(ts, token)
		return apierrors.IsUnauthorized(err)
	})
	if d := time.Since(cached); d < tokenCacheTTL {
		t.Errorf("the token was refused %v after it was cached, before its entry (%v) expired", d, tokenCacheTTL)
	}
	if st := tokenReview(t, admin, token); st.Authenticated || st.Error != "service account token has been invalidated" {
		t.Errorf("TokenReview of the deleted node's token = %+v, want kube's error", st)
	}

	// A node recreated under the same name has another uid: the token
	// stays refused, and a token for the new node works.
	recreated := createNode(t, admin, "worker-3")
	if _, err := whoami(ts, token); !apierrors.IsUnauthorized(err) {
		t.Errorf("token of a recreated node: err = %v, want 401", err)
	}
	want := "node UID (" + string(recreated.UID) + ") does not match service account node ref claim (" + string(old.UID) + ")"
	if st := tokenReview(t, admin, token); st.Authenticated || st.Error != want {
		t.Errorf("TokenReview of the recreated node's old token = %+v, want error %q", st, want)
	}
	fresh, err := kubectlToken(t, ts, "agent", "--bound-object-kind", "Node", "--bound-object-name", "worker-3")
	if err != nil {
		t.Fatalf("kubectl create token: %v\n%s", err, fresh)
	}
	ui, err := whoami(ts, fresh)
	if err != nil {
		t.Fatalf("token for the recreated node: %v", err)
	}
	wantExtra(t, ui, map[string]string{"authentication.kubernetes.io/node-uid": string(recreated.UID)})
}
