package serviceaccount

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/storage/backend"
)

// The package's tests that read objects share one embedded etcd, started
// on first use; each test keeps to its own key prefix.
var etcd struct {
	once sync.Once
	dir  string
	b    *backend.Backend
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if etcd.b != nil {
		etcd.b.Close()
		os.RemoveAll(etcd.dir)
	}
	os.Exit(code)
}

var prefixSeq atomic.Int64

// newObjects is a registry on the shared etcd, under a fresh prefix, with
// no watch caches: reads see writes at once.
func newObjects(t *testing.T) Objects {
	t.Helper()
	etcd.once.Do(func() {
		if etcd.dir, etcd.err = os.MkdirTemp("", "kpipe-sa-test-"); etcd.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		etcd.b, etcd.err = backend.Open(ctx, backend.Config{DataDir: filepath.Join(etcd.dir, "etcd")}, zap.NewNop())
	})
	if etcd.err != nil {
		t.Fatalf("embedded etcd: %v", etcd.err)
	}
	reg := api.NewRegistry(api.Resources(api.Options{EventTTL: time.Hour}))
	prefix := fmt.Sprintf("/satest-%d/registry", prefixSeq.Add(1))
	t.Cleanup(reg.AttachStorage(etcd.b.Client, prefix, prometheus.NewRegistry(), zap.NewNop(), api.StorageOptions{}))
	return Objects{Resources: reg, Prefix: prefix}
}

// put writes obj under resource (core/v1) directly to storage.
func (o Objects) put(t *testing.T, resource string, obj runtime.Object) {
	t.Helper()
	res, ok := o.Resources.Lookup("", "v1", resource)
	if !ok {
		t.Fatalf("no resource %s", resource)
	}
	m, err := metaAccessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Store.Create(context.Background(), res.Key(o.Prefix, m.GetNamespace(), m.GetName()), obj, res.New(), 0); err != nil {
		t.Fatalf("create %s %s: %v", resource, m.GetName(), err)
	}
}

// remove deletes an object directly from storage.
func (o Objects) remove(t *testing.T, resource, namespace, name string) {
	t.Helper()
	res, _ := o.Resources.Lookup("", "v1", resource)
	if err := res.Store.Delete(context.Background(), res.Key(o.Prefix, namespace, name), res.New(), nil, nil); err != nil {
		t.Fatalf("delete %s %s: %v", resource, name, err)
	}
}

func metaAccessor(obj runtime.Object) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", obj)
	}
	return m, nil
}

func node(name, uid string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid)}}
}

// requestToken asks for a token for ns/sa bound to ref, and returns the claims
// of the token it got.
func requestToken(t *testing.T, tk *Tokens, objs Objects, ref *authenticationv1.BoundObjectReference) (*Claims, error) {
	t.Helper()
	out, err := tk.TokenRequest(objs)(context.Background(), "ns", "sa", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: ref}})
	if err != nil {
		return nil, err
	}
	c, _, ok, err := tk.Verify(out.(*authenticationv1.TokenRequest).Status.Token, nil)
	if !ok || err != nil {
		t.Fatalf("the issued token does not verify: ok %v err %v", ok, err)
	}
	return c, nil
}

func wantStatus(t *testing.T, err error, code int32, msg string) {
	t.Helper()
	se, ok := err.(apierrors.APIStatus)
	if !ok {
		t.Fatalf("err = %v (%T), want a %d Status", err, err, code)
	}
	if st := se.Status(); st.Code != code || st.Message != msg {
		t.Fatalf("got %d %q,\nwant %d %q", st.Code, st.Message, code, msg)
	}
}

func refOf(kind, apiVersion, name, uid string) *authenticationv1.BoundObjectReference {
	return &authenticationv1.BoundObjectReference{Kind: kind, APIVersion: apiVersion, Name: name, UID: types.UID(uid)}
}

func TestTokenRequestBoundObjects(t *testing.T) {
	objs := newObjects(t)
	tk := newTokens(t, Options{Signer: ecKey(t)})
	objs.put(t, "serviceaccounts", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sa", UID: "sa-uid"}})
	objs.put(t, "nodes", node("n1", "n1-uid"))
	objs.put(t, "pods", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "on-n1", UID: "p1-uid"}, Spec: corev1.PodSpec{ServiceAccountName: "sa", NodeName: "n1"}})
	objs.put(t, "pods", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "on-gone", UID: "p2-uid"}, Spec: corev1.PodSpec{ServiceAccountName: "sa", NodeName: "gone"}})
	objs.put(t, "pods", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "unscheduled", UID: "p3-uid"}, Spec: corev1.PodSpec{ServiceAccountName: "sa"}})
	objs.put(t, "secrets", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s", UID: "s-uid"}})

	tests := []struct {
		name     string
		ref      *authenticationv1.BoundObjectReference
		pod      *Ref
		secret   *Ref
		node     *Ref
		wantCode int32
		wantMsg  string
	}{
		{name: "node", ref: refOf("Node", "v1", "n1", ""), node: &Ref{Name: "n1", UID: "n1-uid"}},
		{name: "node with its uid", ref: refOf("Node", "v1", "n1", "n1-uid"), node: &Ref{Name: "n1", UID: "n1-uid"}},
		{name: "missing node is 404", ref: refOf("Node", "v1", "nope", ""), wantCode: 404, wantMsg: `nodes "nope" not found`},
		{name: "node of another uid is 409", ref: refOf("Node", "v1", "n1", "old-uid"), wantCode: 409,
			wantMsg: `Operation cannot be fulfilled on Node "n1": the UID in the bound object reference (old-uid) does not match the UID in record. The object might have been deleted and then recreated`},
		{name: "pod on a node carries the node", ref: refOf("Pod", "v1", "on-n1", "p1-uid"), pod: &Ref{Name: "on-n1", UID: "p1-uid"}, node: &Ref{Name: "n1", UID: "n1-uid"}},
		{name: "pod on a missing node carries its name", ref: refOf("Pod", "v1", "on-gone", ""), pod: &Ref{Name: "on-gone", UID: "p2-uid"}, node: &Ref{Name: "gone"}},
		{name: "unscheduled pod has no node", ref: refOf("Pod", "v1", "unscheduled", ""), pod: &Ref{Name: "unscheduled", UID: "p3-uid"}},
		{name: "secret", ref: refOf("Secret", "v1", "s", ""), secret: &Ref{Name: "s", UID: "s-uid"}},
		{name: "unsupported kind", ref: refOf("ConfigMap", "v1", "c", ""), wantCode: 400, wantMsg: "cannot bind token to object of type /v1, Kind=ConfigMap"},
		{name: "node of another group", ref: refOf("Node", "example.com/v1", "n1", ""), wantCode: 400, wantMsg: "cannot bind token to object of type example.com/v1, Kind=Node"},
		{name: "webhook configuration, gate off", ref: refOf("ValidatingWebhookConfiguration", "admissionregistration.k8s.io/v1", "w", ""), wantCode: 400,
			wantMsg: "cannot bind token to object of type admissionregistration.k8s.io/v1, Kind=ValidatingWebhookConfiguration (feature gate APIServerWebhookAuthenticationToken is disabled)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := requestToken(t, tk, objs, tt.ref)
			if tt.wantCode != 0 {
				wantStatus(t, err, tt.wantCode, tt.wantMsg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			k := c.Kubernetes
			for _, r := range []struct {
				what      string
				got, want *Ref
			}{{"pod", k.Pod, tt.pod}, {"secret", k.Secret, tt.secret}, {"node", k.Node, tt.node}} {
				if (r.got == nil) != (r.want == nil) || (r.got != nil && *r.got != *r.want) {
					t.Errorf("%s claim = %+v, want %+v", r.what, r.got, r.want)
				}
			}
			if k.ServiceAccount != (Ref{Name: "sa", UID: "sa-uid"}) || k.Namespace != "ns" {
				t.Errorf("service account claims = %+v", k)
			}
		})
	}
}

func TestLiveNodeBound(t *testing.T) {
	objs := newObjects(t)
	tk := newTokens(t, Options{Signer: ecKey(t)})
	objs.put(t, "serviceaccounts", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sa", UID: "sa-uid"}})
	objs.put(t, "nodes", node("n1", "n1-uid"))
	objs.put(t, "nodes", node("n2", "n2-uid"))
	objs.put(t, "pods", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "p-uid"}, Spec: corev1.PodSpec{ServiceAccountName: "sa", NodeName: "n2"}})
	ctx := context.Background()
	now := time.Now()

	nodeBound, err := requestToken(t, tk, objs, refOf("Node", "v1", "n1", ""))
	if err != nil {
		t.Fatal(err)
	}
	podBound, err := requestToken(t, tk, objs, refOf("Pod", "v1", "p", ""))
	if err != nil {
		t.Fatal(err)
	}
	if podBound.Kubernetes.Node == nil || podBound.Kubernetes.Node.UID != "n2-uid" {
		t.Fatalf("pod-bound token's node claim = %+v", podBound.Kubernetes.Node)
	}
	if err := objs.Live(ctx, nodeBound, now); err != nil {
		t.Fatalf("node-bound token while its node exists: %v", err)
	}
	u := UserFor(nodeBound)
	if got := u.Extra[NodeNameKey]; len(got) != 1 || got[0] != "n1" {
		t.Errorf("extra %s = %v", NodeNameKey, got)
	}
	if got := u.Extra[NodeUIDKey]; len(got) != 1 || got[0] != "n1-uid" {
		t.Errorf("extra %s = %v", NodeUIDKey, got)
	}
	if _, ok := u.Extra[PodNameKey]; ok {
		t.Errorf("a node-bound token's user has a pod: %v", u.Extra)
	}

	// Deleted: kube's error.
	objs.remove(t, "nodes", "", "n1")
	if err := objs.Live(ctx, nodeBound, now); err == nil || err.Error() != "service account token has been invalidated" {
		t.Errorf("node deleted: err = %v", err)
	}
	// Recreated under the same name: another uid.
	objs.put(t, "nodes", node("n1", "n1-new"))
	if err := objs.Live(ctx, nodeBound, now); err == nil || err.Error() != "node UID (n1-new) does not match service account node ref claim (n1-uid)" {
		t.Errorf("node recreated: err = %v", err)
	}
	// Being deleted for longer than the leeway.
	objs.remove(t, "nodes", "", "n1")
	old := metav1.NewTime(now.Add(-2 * time.Minute))
	n := node("n1", "n1-uid")
	n.DeletionTimestamp = &old
	objs.put(t, "nodes", n)
	if err := objs.Live(ctx, nodeBound, now); err == nil || err.Error() != "service account token has been invalidated" {
		t.Errorf("node being deleted for 2m: err = %v", err)
	}
	// Within the leeway it still backs the token.
	if err := objs.Live(ctx, nodeBound, now.Add(-90*time.Second)); err != nil {
		t.Errorf("node being deleted within the leeway: %v", err)
	}

	// A pod-bound token does not depend on its node, as in kube: only the
	// pod is checked.
	objs.remove(t, "nodes", "", "n2")
	if err := objs.Live(ctx, podBound, now); err != nil {
		t.Errorf("pod-bound token after its node was deleted: %v", err)
	}
	if u := UserFor(podBound); len(u.Extra[NodeUIDKey]) != 1 || u.Extra[NodeUIDKey][0] != "n2-uid" {
		t.Errorf("pod-bound token's user extra = %v, want the node claims", u.Extra)
	}
}

type auditRecorder map[string]string

func (a auditRecorder) AddAnnotation(k, v string) {
	if _, ok := a[k]; !ok {
		a[k] = v
	}
}
func (auditRecorder) RecordOperation(*request.Operation) {}

// A TokenRequest annotates its audit event with the issued token's
// credential id, as kube does, whatever the token is bound to.
func TestTokenRequestAuditsCredentialID(t *testing.T) {
	objs := newObjects(t)
	tk := newTokens(t, Options{Signer: ecKey(t)})
	objs.put(t, "serviceaccounts", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sa", UID: "sa-uid"}})
	objs.put(t, "nodes", node("n1", "n1-uid"))
	for _, ref := range []*authenticationv1.BoundObjectReference{nil, refOf("Node", "v1", "n1", "")} {
		audit := auditRecorder{}
		ctx := request.WithScope(context.Background(), &request.Scope{Audit: audit})
		out, err := tk.TokenRequest(objs)(ctx, "ns", "sa", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: ref}})
		if err != nil {
			t.Fatal(err)
		}
		c, _, _, err := tk.Verify(out.(*authenticationv1.TokenRequest).Status.Token, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := audit[IssuedCredentialIDAnnotation], "JTI="+c.ID; c.ID == "" || got != want {
			t.Errorf("bound to %v: annotation %s = %q, want %q", ref, IssuedCredentialIDAnnotation, got, want)
		}
	}
}
