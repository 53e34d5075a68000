package kubeanswers

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
)

// managerFields returns the fieldsV1 of manager's entry with operation op.
func managerFields(t *testing.T, s *corev1.Secret, manager string, op metav1.ManagedFieldsOperationType) string {
	t.Helper()
	for _, e := range s.ManagedFields {
		if e.Manager == manager && e.Operation == op && e.FieldsV1 != nil {
			return string(e.FieldsV1.Raw)
		}
	}
	t.Fatalf("no %s entry of %q in %+v", op, manager, s.ManagedFields)
	return ""
}

// kube folds stringData into data when it converts the decoded Secret,
// before the field manager runs: creates, updates and patches own f:data.
// An apply is merged first and folded after, so it owns what it applied.
func TestSecretStringDataManagedFields(t *testing.T) {
	ts, cs := e2eutil.APIServer(t)
	e2eutil.Namespace(t, cs, "sec")
	ctx := context.Background()
	secrets := cs.CoreV1().Secrets("sec")

	steps := []struct {
		name    string
		write   func() (*corev1.Secret, error)
		manager string
		op      metav1.ManagedFieldsOperationType
		fields  string
		data    map[string]string
	}{
		{"create", func() (*corev1.Secret, error) {
			return secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"a": "1"}},
				metav1.CreateOptions{FieldManager: "creator"})
		}, "creator", metav1.ManagedFieldsOperationUpdate, `{"f:data":{".":{},"f:a":{}},"f:type":{}}`, map[string]string{"a": "1"}},
		{"update", func() (*corev1.Secret, error) {
			cur, err := secrets.Get(ctx, "s", metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			cur.StringData = map[string]string{"b": "2"}
			return secrets.Update(ctx, cur, metav1.UpdateOptions{FieldManager: "updater"})
		}, "updater", metav1.ManagedFieldsOperationUpdate, `{"f:data":{"f:b":{}}}`, map[string]string{"a": "1", "b": "2"}},
		{"merge patch", func() (*corev1.Secret, error) {
			return secrets.Patch(ctx, "s", types.MergePatchType, []byte(`{"stringData":{"c":"3"}}`), metav1.PatchOptions{FieldManager: "patcher"})
		}, "patcher", metav1.ManagedFieldsOperationUpdate, `{"f:data":{"f:c":{}}}`, map[string]string{"a": "1", "b": "2", "c": "3"}},
		{"strategic merge patch", func() (*corev1.Secret, error) {
			return secrets.Patch(ctx, "s", types.StrategicMergePatchType, []byte(`{"stringData":{"a":"4"}}`), metav1.PatchOptions{FieldManager: "smp"})
		}, "smp", metav1.ManagedFieldsOperationUpdate, `{"f:data":{"f:a":{}}}`, map[string]string{"a": "4", "b": "2", "c": "3"}},
		{"apply", func() (*corev1.Secret, error) {
			return secrets.Patch(ctx, "s", types.ApplyYAMLPatchType,
				[]byte("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {d: \"5\"}\n"), metav1.PatchOptions{FieldManager: "applier"})
		}, "applier", metav1.ManagedFieldsOperationApply, `{"f:stringData":{"f:d":{}}}`, map[string]string{"a": "4", "b": "2", "c": "3", "d": "5"}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			got, err := s.write()
			if err != nil {
				t.Fatal(err)
			}
			if got.StringData != nil {
				t.Errorf("stringData %v kept", got.StringData)
			}
			data := map[string]string{}
			for k, v := range got.Data {
				data[k] = string(v)
			}
			if len(data) != len(s.data) {
				t.Errorf("data %v, want %v", data, s.data)
			}
			for k, v := range s.data {
				if data[k] != v {
					t.Errorf("data %v, want %v", data, s.data)
				}
			}
			if f := managerFields(t, got, s.manager, s.op); f != s.fields {
				t.Errorf("managedFields of %q: %s, want %s", s.manager, f, s.fields)
			}
		})
	}

	// The sequence with the real kubectl: a client-side apply of
	// a Secret with stringData, then a server-side apply of the same file.
	t.Run("kubectl apply then apply --server-side", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "secret.yaml")
		os.WriteFile(file, []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: sec}\nstringData: {password: s3cret}\n"), 0o600)
		if out, err := e2eutil.Kubectl(t, ts, "apply", "-f", file); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		created, err := secrets.Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := `{"f:data":{".":{},"f:password":{}},"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:type":{}}`
		if f := managerFields(t, created, "kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate); f != want {
			t.Errorf("client-side apply's managedFields %s, want %s", f, want)
		}
		out, err := e2eutil.Kubectl(t, ts, "apply", "--server-side", "-f", file)
		if err != nil {
			t.Fatalf("server-side apply: %v: %s", err, out)
		}
		e2eutil.MustContain(t, "kubectl output", out, "secret/db serverside-applied")
		got, err := kubernetes.NewForConfigOrDie(ts.Config).CoreV1().Secrets("sec").Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Data["password"]) != "s3cret" {
			t.Errorf("data %v after the server-side apply", got.Data)
		}
	})
}
