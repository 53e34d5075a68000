package revisions

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// clients returns a JSON and a protobuf clientset.
func clients(t *testing.T, ts *testserver.TestServer) (js, pb kubernetes.Interface) {
	cfg := rest.CopyConfig(ts.Config)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf
	return kubernetes.NewForConfigOrDie(ts.Config), kubernetes.NewForConfigOrDie(cfg)
}

// ControllerRevisions through client-go, in JSON and protobuf: create, get,
// list, watch, update, patch, delete, and kube's 422s.
func TestControllerRevisionClientGo(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	js, pb := clients(t, ts)
	ctx := context.Background()
	e2eutil.Namespace(t, js, "cr-go")

	for _, c := range []struct {
		name string
		cs   kubernetes.Interface
	}{{"json", js}, {"protobuf", pb}} {
		t.Run(c.name, func(t *testing.T) {
			revs := c.cs.AppsV1().ControllerRevisions("cr-go")
			w, err := revs.Watch(ctx, metav1.ListOptions{LabelSelector: "run=" + c.name})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()

			in := &appsv1.ControllerRevision{
				ObjectMeta: metav1.ObjectMeta{Name: "web-" + c.name, Labels: map[string]string{"run": c.name}},
				Data:       runtime.RawExtension{Raw: []byte(`{"spec":{"template":{"metadata":{"labels":{"app":"web"}}}}}`)},
				Revision:   1,
			}
			r, err := revs.Create(ctx, in, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Revision != 1 || string(r.Data.Raw) != string(in.Data.Raw) || r.Generation != 0 {
				t.Errorf("created: revision %d, generation %d, data %s", r.Revision, r.Generation, r.Data.Raw)
			}
			select {
			case ev := <-w.ResultChan():
				if ev.Type != watch.Added || ev.Object.(*appsv1.ControllerRevision).Name != r.Name {
					t.Errorf("watch: %s %T", ev.Type, ev.Object)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no watch event for the create")
			}

			got, err := revs.Get(ctx, r.Name, metav1.GetOptions{})
			if err != nil || string(got.Data.Raw) != string(in.Data.Raw) {
				t.Fatalf("get: %v %s", err, got.Data.Raw)
			}
			list, err := revs.List(ctx, metav1.ListOptions{LabelSelector: "run=" + c.name})
			if err != nil || len(list.Items) != 1 {
				t.Fatalf("list: %v, %d items", err, len(list.Items))
			}

			// Metadata and the revision number may change, data may not.
			got.Labels["rolled"] = "yes"
			got.Revision = 2
			if got, err = revs.Update(ctx, got, metav1.UpdateOptions{}); err != nil || got.Revision != 2 {
				t.Fatalf("update: %v", err)
			}
			got.Data.Raw = []byte(`{"spec":{"replicas":3}}`)
			_, err = revs.Update(ctx, got, metav1.UpdateOptions{})
			e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
				`ControllerRevision.apps "`+r.Name+`" is invalid: data: Invalid value: {"spec":{"replicas":3}}: field is immutable`)

			p, err := revs.Patch(ctx, r.Name, types.MergePatchType, []byte(`{"revision":5}`), metav1.PatchOptions{})
			if err != nil || p.Revision != 5 {
				t.Fatalf("patch: %v", err)
			}
			_, err = revs.Patch(ctx, r.Name, types.MergePatchType, []byte(`{"revision":-1}`), metav1.PatchOptions{})
			e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
				`ControllerRevision.apps "`+r.Name+`" is invalid: revision: Invalid value: -1: must be greater than or equal to 0`)

			if err := revs.Delete(ctx, r.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			_, err = revs.Get(ctx, r.Name, metav1.GetOptions{})
			e2eutil.WantStatus(t, err, http.StatusNotFound, metav1.StatusReasonNotFound,
				`controllerrevisions.apps "`+r.Name+`" not found`)
		})
	}

	// A create without data, or with data that is no object, is kube's 422.
	revs := js.AppsV1().ControllerRevisions("cr-go")
	for _, tc := range []struct {
		name, raw, msg string
	}{
		{"no-data", "", `ControllerRevision.apps "no-data" is invalid: data: Required value: data is mandatory`},
		{"array-data", "[1,2]", `ControllerRevision.apps "array-data" is invalid: data: Required value: data must be a valid JSON object`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: tc.name}}
			if tc.raw != "" {
				in.Data.Raw = []byte(tc.raw)
			}
			_, err := revs.Create(ctx, in, metav1.CreateOptions{})
			e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, tc.msg)
		})
	}

	// deletecollection
	if err := revs.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
}

// PodTemplates through client-go: pod spec defaults on the template,
// generation from the template, the template's warnings, the deleted
// object returned by delete, kube's 422.
func TestPodTemplateClientGo(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	var warnings e2eutil.Warnings
	cfg := rest.CopyConfig(ts.Config)
	cfg.WarningHandler = &warnings
	cs := kubernetes.NewForConfigOrDie(cfg)
	_, pb := clients(t, ts)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "pt-go")
	pts := cs.CoreV1().PodTemplates("pt-go")

	in := &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"beta.kubernetes.io/arch": "amd64"},
				Containers:   []corev1.Container{{Name: "app", Image: "nginx"}},
			},
		},
	}
	w, err := pts.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	p, err := pts.Create(ctx, in, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := p.Template.Spec
	if p.Generation != 1 || spec.RestartPolicy != corev1.RestartPolicyAlways || spec.DNSPolicy != corev1.DNSClusterFirst ||
		spec.TerminationGracePeriodSeconds == nil || *spec.TerminationGracePeriodSeconds != 30 ||
		spec.Containers[0].ImagePullPolicy != corev1.PullAlways || spec.Containers[0].TerminationMessagePath != "/dev/termination-log" {
		t.Errorf("created: generation %d, spec %+v", p.Generation, spec)
	}
	if got := warnings.Take(); len(got) != 1 || got[0] != `template.spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead` {
		t.Errorf("create warnings = %q", got)
	}
	select {
	case ev := <-w.ResultChan():
		if ev.Type != watch.Added {
			t.Errorf("watch: %s", ev.Type)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event for the create")
	}

	// A label change keeps the generation and warns nothing; a template
	// change bumps it and warns again.
	p.Labels = map[string]string{"tier": "fe"}
	if p, err = pts.Update(ctx, p, metav1.UpdateOptions{}); err != nil || p.Generation != 1 {
		t.Fatalf("update labels: %v, generation %d", err, p.Generation)
	}
	if got := warnings.Take(); len(got) != 0 {
		t.Errorf("label update warnings = %q", got)
	}
	p, err = pts.Patch(ctx, "web", types.StrategicMergePatchType, []byte(`{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.27"}]}}}`), metav1.PatchOptions{})
	if err != nil || p.Generation != 2 {
		t.Fatalf("patch: %v, generation %d", err, p.Generation)
	}
	if got := warnings.Take(); len(got) != 1 {
		t.Errorf("template patch warnings = %q", got)
	}

	// The protobuf client reads it the same.
	got, err := pb.CoreV1().PodTemplates("pt-go").Get(ctx, "web", metav1.GetOptions{})
	if err != nil || got.Template.Spec.Containers[0].Image != "nginx:1.27" {
		t.Fatalf("protobuf get: %v", err)
	}
	list, err := pts.List(ctx, metav1.ListOptions{LabelSelector: "tier=fe"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %v", err)
	}

	bad := in.DeepCopy()
	bad.Name = "bad"
	bad.Template.Spec.Containers[0].Name = "App"
	_, err = pts.Create(ctx, bad, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`PodTemplate "bad" is invalid: template.spec.containers[0].name: Invalid value: "App": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`)

	// kube's PodTemplate delete answers with the deleted object.
	res := cs.CoreV1().RESTClient().Delete().Namespace("pt-go").Resource("podtemplates").Name("web").Do(ctx)
	raw, err := res.Raw()
	if err != nil || !strings.Contains(string(raw), `"kind":"PodTemplate"`) || !strings.Contains(string(raw), `"name":"web"`) {
		t.Fatalf("delete: %v, got %s", err, raw)
	}
	if err := pts.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
}
