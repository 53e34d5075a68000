package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
)

func TestConfigMapLifecycle(t *testing.T) {
	_, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "cm")
	cms := cs.CoreV1().ConfigMaps("cm")

	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{"app": "a"}}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() || created.Generation != 0 {
		t.Errorf("system fields: %+v", created.ObjectMeta)
	}
	_, err = cms.Create(ctx, created, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 409, metav1.StatusReasonAlreadyExists, `configmaps "x" already exists`)

	got, err := cms.Get(ctx, "x", metav1.GetOptions{})
	if err != nil || got.ResourceVersion != created.ResourceVersion || got.Data["k"] != "v" {
		t.Fatalf("get: %v %+v", err, got)
	}
	got.Data["k"] = "w"
	updated, err := cms.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil || updated.ResourceVersion == got.ResourceVersion {
		t.Fatalf("update: %v", err)
	}
	_, err = cms.Update(ctx, got, metav1.UpdateOptions{}) // stale resourceVersion
	e2eutil.WantStatus(t, err, 409, metav1.StatusReasonConflict, `Operation cannot be fulfilled on configmaps "x": the object has been modified; please apply your changes to the latest version and try again`)

	// Without a resourceVersion, an update is unconditional.
	got.ResourceVersion = ""
	got.Data["k"] = "z"
	if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("unconditional update: %v", err)
	}

	for _, sel := range []struct {
		label string
		n     int
	}{{"app=a", 1}, {"app!=a", 0}, {"app in (a,b)", 1}, {"app notin (a)", 0}, {"app", 1}, {"!app", 0}} {
		list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: sel.label})
		if err != nil || len(list.Items) != sel.n {
			t.Errorf("selector %q: %v, %d items", sel.label, err, len(list.Items))
		}
	}
	list, err := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{FieldSelector: "metadata.namespace=cm,metadata.name=x"})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("all-namespace list with field selector: %v %d", err, len(list.Items))
	}

	err = cms.Delete(ctx, "x", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID("other"))}})
	e2eutil.WantStatus(t, err, 409, metav1.StatusReasonConflict, "")
	if err := cms.Delete(ctx, "x", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = cms.Get(ctx, "x", metav1.GetOptions{})
	e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `configmaps "x" not found`)
	err = cms.Delete(ctx, "x", metav1.DeleteOptions{})
	e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `configmaps "x" not found`)
}

func TestListPaginationIsPinned(t *testing.T) {
	_, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "pages")
	cms := cs.CoreV1().ConfigMaps("pages")
	for i := 0; i < 25; i++ {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	first, err := cms.List(ctx, metav1.ListOptions{Limit: 10})
	if err != nil || len(first.Items) != 10 || first.Continue == "" || first.RemainingItemCount == nil || *first.RemainingItemCount != 15 {
		t.Fatalf("first page: %v items=%d continue=%q remaining=%v", err, len(first.Items), first.Continue, first.RemainingItemCount)
	}
	// Writes after the first page do not show in the later ones.
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-99"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	seen := len(first.Items)
	next := first.Continue
	for next != "" {
		page, err := cms.List(ctx, metav1.ListOptions{Limit: 10, Continue: next})
		if err != nil {
			t.Fatal(err)
		}
		if page.ResourceVersion != first.ResourceVersion {
			t.Errorf("page at %s, first at %s", page.ResourceVersion, first.ResourceVersion)
		}
		seen += len(page.Items)
		next = page.Continue
	}
	if seen != 25 {
		t.Errorf("pages held %d objects, want the 25 of the first page's revision", seen)
	}
	_, err = cms.List(ctx, metav1.ListOptions{Limit: 10, Continue: "bogus"})
	e2eutil.WantStatus(t, err, 400, metav1.StatusReasonBadRequest, "")
}

func TestWriteErrors(t *testing.T) {
	ts, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "errs")
	c := ts.HTTPClient(t)
	post := func(path, body string, query string) (int, string, http.Header) {
		req, _ := http.NewRequest("POST", ts.URL()+path+query, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fprint(&b, readAll(resp))
		return resp.StatusCode, b.String(), resp.Header
	}
	cases := []struct {
		name, path, body, query string
		code                    int
		want                    []string
	}{
		{name: "invalid name", path: "/api/v1/namespaces/errs/configmaps", body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}}`, code: 422,
			want: []string{`"reason":"Invalid"`, `ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters`, `"causes":[`}},
		{name: "namespace mismatch", path: "/api/v1/namespaces/errs/configmaps", body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"other"}}`, code: 400,
			want: []string{"the namespace of the provided object does not match the namespace sent on the request"}},
		{name: "wrong apiVersion", path: "/apis/apps/v1/namespaces/errs/deployments", body: `{"apiVersion":"apps/v2","kind":"Deployment","metadata":{"name":"a"}}`, code: 400,
			want: []string{`"reason":"BadRequest"`}},
		{name: "missing namespace", path: "/api/v1/namespaces/nope/configmaps", body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`, code: 404,
			want: []string{`namespaces \"nope\" not found`, `"reason":"NotFound"`}},
		{name: "strict unknown field", path: "/api/v1/namespaces/errs/configmaps", query: "?fieldValidation=Strict", body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"bogus":1}`, code: 400,
			want: []string{`strict decoding error: unknown field \"bogus\"`}},
		{name: "strict duplicate field", path: "/api/v1/namespaces/errs/configmaps", query: "?fieldValidation=Strict", body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{},"data":{}}`, code: 400,
			want: []string{`duplicate field \"data\"`}},
		{name: "bad dryRun", path: "/api/v1/namespaces/errs/configmaps", query: "?dryRun=Some", body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`, code: 422,
			want: []string{`CreateOptions.meta.k8s.io \"\" is invalid: dryRun[0]: Unsupported value: \"Some\": supported values: \"All\"`}},
		{name: "malformed JSON", path: "/api/v1/namespaces/errs/configmaps", body: `{"apiVersion":`, code: 400, want: []string{`"reason":"BadRequest"`}},
		{name: "unknown resource", path: "/api/v1/namespaces/errs/widgets", body: `{}`, code: 404, want: []string{"the server could not find the requested resource"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := post(tc.path, tc.body, tc.query)
			if code != tc.code {
				t.Fatalf("code %d, want %d: %s", code, tc.code, body)
			}
			e2eutil.MustContain(t, tc.name, body, append(tc.want, `"kind":"Status"`)...)
		})
	}
	t.Run("warn unknown field", func(t *testing.T) {
		code, body, h := post("/api/v1/namespaces/errs/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"warned"},"bogus":1}`, "?fieldValidation=Warn")
		if code != 201 || !strings.Contains(h.Get("Warning"), `unknown field \"bogus\"`) {
			t.Errorf("%d %s warning=%q", code, body, h.Get("Warning"))
		}
	})
	t.Run("system namespaces cannot be deleted", func(t *testing.T) {
		err := cs.CoreV1().Namespaces().Delete(ctx, "kube-system", metav1.DeleteOptions{})
		e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `namespaces "kube-system" is forbidden: this namespace may not be deleted`)
	})
	t.Run("dry run stores nothing", func(t *testing.T) {
		cm, err := cs.CoreV1().ConfigMaps("errs").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}}, metav1.CreateOptions{DryRun: []string{"All"}})
		if err != nil || cm.UID == "" {
			t.Fatalf("dry run: %v %+v", err, cm)
		}
		_, err = cs.CoreV1().ConfigMaps("errs").Get(ctx, "dry", metav1.GetOptions{})
		e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, "")
	})
	t.Run("generateName", func(t *testing.T) {
		cm, err := cs.CoreV1().ConfigMaps("errs").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}, metav1.CreateOptions{})
		if err != nil || !strings.HasPrefix(cm.Name, "gen-") || len(cm.Name) != len("gen-")+5 {
			t.Fatalf("generateName: %v %q", err, cm.Name)
		}
	})
}

func readAll(resp *http.Response) string {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

func TestDeploymentGenerationStatusAndScale(t *testing.T) {
	_, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "apps")
	deps := cs.AppsV1().Deployments("apps")
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}},
			},
		},
		Status: appsv1.DeploymentStatus{Replicas: 7}, // ignored on create
	}
	got, err := deps.Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Generation != 1 || got.Status.Replicas != 0 || *got.Spec.Replicas != 1 || *got.Spec.RevisionHistoryLimit != 10 ||
		*got.Spec.ProgressDeadlineSeconds != 600 || got.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType ||
		got.Spec.Strategy.RollingUpdate.MaxSurge.String() != "25%" || got.Spec.Strategy.RollingUpdate.MaxUnavailable.String() != "25%" {
		t.Errorf("create: generation %d status %+v spec %+v", got.Generation, got.Status, got.Spec)
	}
	c := got.Spec.Template.Spec.Containers[0]
	if c.ImagePullPolicy != corev1.PullAlways || c.TerminationMessagePath != "/dev/termination-log" || got.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		t.Errorf("template defaults: %+v", c)
	}

	got.Status.Replicas = 5 // the main resource ignores status
	got.Labels = map[string]string{"x": "y"}
	got, err = deps.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil || got.Generation != 1 || got.Status.Replicas != 0 {
		t.Fatalf("metadata-only update: %v generation %d status %d", err, got.Generation, got.Status.Replicas)
	}
	got.Spec.Template.Spec.Containers[0].Image = "nginx:1.27"
	if got, err = deps.Update(ctx, got, metav1.UpdateOptions{}); err != nil || got.Generation != 2 {
		t.Fatalf("spec update: %v generation %d", err, got.Generation)
	}

	got.Status.Replicas = 3
	got.Spec.Paused = true // the status subresource ignores spec
	st, err := deps.UpdateStatus(ctx, got, metav1.UpdateOptions{})
	if err != nil || st.Status.Replicas != 3 || st.Spec.Paused || st.Generation != 2 {
		t.Fatalf("status update: %v %+v paused=%v", err, st.Status, st.Spec.Paused)
	}

	scale, err := deps.GetScale(ctx, "web", metav1.GetOptions{})
	if err != nil || scale.Spec.Replicas != 1 || scale.Status.Replicas != 3 || scale.Status.Selector != "app=web" {
		t.Fatalf("get scale: %v %+v", err, scale)
	}
	scale.Spec.Replicas = 4
	if scale, err = deps.UpdateScale(ctx, "web", scale, metav1.UpdateOptions{}); err != nil || scale.Spec.Replicas != 4 {
		t.Fatalf("update scale: %v %+v", err, scale)
	}
	if got, _ = deps.Get(ctx, "web", metav1.GetOptions{}); *got.Spec.Replicas != 4 || got.Generation != 3 {
		t.Errorf("after scale: replicas %d generation %d", *got.Spec.Replicas, got.Generation)
	}
	scale.Spec.Replicas = -1
	_, err = deps.UpdateScale(ctx, "web", scale, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`)

	// Deleting returns a Status for deployments, the object for pods.
	if err := deps.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestNamespaceDeletion(t *testing.T) {
	_, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "going")
	// A held object keeps the namespace Terminating while the test looks.
	held := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}}}
	if _, err := cs.CoreV1().ConfigMaps("going").Create(ctx, held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}
		if _, err := cs.CoreV1().ConfigMaps("going").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, "going", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, "going", metav1.GetOptions{})
	if err != nil || ns.Status.Phase != corev1.NamespaceTerminating || ns.DeletionTimestamp == nil {
		t.Fatalf("%v %+v", err, ns)
	}
	_, err = cs.CoreV1().ConfigMaps("going").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `configmaps "late" is forbidden: unable to create new content in namespace going because it is being terminated`)

	// The namespace controller empties it; the held object waits.
	e2eutil.Eventually(t, 20*time.Second, "the namespace's objects to be deleted", func() bool {
		list, err := cs.CoreV1().ConfigMaps("going").List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 1 && list.Items[0].DeletionTimestamp != nil
	})
	got, err := cs.CoreV1().ConfigMaps("going").Get(ctx, "held", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Finalizers = nil
	if _, err := cs.CoreV1().ConfigMaps("going").Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.Eventually(t, 20*time.Second, "the namespace to be removed", func() bool {
		_, err := cs.CoreV1().Namespaces().Get(ctx, "going", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

func TestEventsExpireThroughLeases(t *testing.T) {
	ts, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "ev")
	_, err := cs.CoreV1().Events("ev").Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "e1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ev", Name: "p"},
		Reason:         "Test", Message: "m", Type: "Normal",
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	key := ts.Settings().Storage.Prefix + "/events/ev/e1"
	resp, err := ts.Backend().Client.Get(ctx, key)
	if err != nil || len(resp.Kvs) != 1 || resp.Kvs[0].Lease == 0 {
		t.Fatalf("event key %s: %v %+v", key, err, resp)
	}
	ttl, err := ts.Backend().Client.TimeToLive(ctx, clientLease(resp.Kvs[0].Lease))
	if err != nil || ttl.GrantedTTL < 3600 {
		t.Errorf("lease TTL %+v %v, want about the 1h eventTTL", ttl, err)
	}
	list, err := cs.CoreV1().Events("ev").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=p,reason=Test"})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("event field selector: %v %d", err, len(list.Items))
	}
	_, err = cs.CoreV1().Events("ev").List(ctx, metav1.ListOptions{FieldSelector: "spec.bogus=1"})
	e2eutil.WantStatus(t, err, 400, metav1.StatusReasonBadRequest, "field label not supported: spec.bogus")
}

var _ runtime.Object = (*corev1.Pod)(nil)

func TestTableAndProtobufOutput(t *testing.T) {
	ts, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "out")
	if _, err := cs.CoreV1().ConfigMaps("out").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := ts.HTTPClient(t)
	table := func(query string) string {
		req, _ := http.NewRequest("GET", ts.URL()+"/api/v1/namespaces/out/configmaps"+query, nil)
		req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return readAll(resp)
	}
	body := table("")
	e2eutil.MustContain(t, "table", body, `"kind":"Table"`, `"apiVersion":"meta.k8s.io/v1"`, `"name":"Name"`, `"name":"Data"`, `"name":"Age"`,
		`"cells":["a",1,`, `"kind":"PartialObjectMetadata"`)
	if body := table("?includeObject=None"); strings.Contains(body, `"object"`) && strings.Contains(body, `"kind":"PartialObjectMetadata"`) {
		t.Errorf("includeObject=None still carries objects: %s", body)
	}
	e2eutil.MustContain(t, "includeObject=Object", table("?includeObject=Object"), `"kind":"ConfigMap"`, `"data":{"k":"v"}`)

	// client-go speaking protobuf, as controllers do.
	cfg := *ts.Config
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
	pcs := kubernetes.NewForConfigOrDie(&cfg)
	cm, err := pcs.CoreV1().ConfigMaps("out").Get(ctx, "a", metav1.GetOptions{})
	if err != nil || cm.Data["k"] != "v" {
		t.Fatalf("protobuf get: %v %+v", err, cm)
	}
	if _, err := pcs.CoreV1().ConfigMaps("out").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("protobuf create: %v", err)
	}
	_, err = pcs.CoreV1().ConfigMaps("out").Get(ctx, "zzz", metav1.GetOptions{})
	e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `configmaps "zzz" not found`)

	_, m := e2eutil.Get(t, c, ts.URL()+"/metrics")
	e2eutil.MustContain(t, "/metrics", m, `etcd_request_duration_seconds_bucket{group="",operation="create",resource="configmaps"`, `apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="POST",version="v1"}`)
}

func TestFinalizersHoldDeletion(t *testing.T) {
	_, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "fin")
	cms := cs.CoreV1().ConfigMaps("fin")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := cms.Get(ctx, "held", metav1.GetOptions{})
	if err != nil || got.DeletionTimestamp == nil || got.DeletionGracePeriodSeconds == nil {
		t.Fatalf("after delete with a finalizer: %v %+v", err, got)
	}
	// An update may not clear deletionTimestamp; removing the last
	// finalizer removes the object.
	got.Finalizers = nil
	if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("removing the finalizer: %v", err)
	}
	_, err = cms.Get(ctx, "held", metav1.GetOptions{})
	e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `configmaps "held" not found`)
}

func clientLease(id int64) clientv3.LeaseID { return clientv3.LeaseID(id) }
