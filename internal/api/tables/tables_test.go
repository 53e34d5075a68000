package tables

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestColumns checks every printer's headers as `kubectl get -o wide`
// prints them (names upper-cased), with the wide ones marked "+".
func TestColumns(t *testing.T) {
	cases := []struct {
		name string
		gr   schema.GroupResource
		want string
	}{
		{"pods", schema.GroupResource{Resource: "pods"}, "NAME READY STATUS RESTARTS AGE +IP +NODE +NOMINATED NODE +READINESS GATES"},
		{"services", schema.GroupResource{Resource: "services"}, "NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE +SELECTOR"},
		{"endpoints", schema.GroupResource{Resource: "endpoints"}, "NAME ENDPOINTS AGE"},
		{"namespaces", schema.GroupResource{Resource: "namespaces"}, "NAME STATUS AGE"},
		{"nodes", schema.GroupResource{Resource: "nodes"}, "NAME STATUS ROLES AGE VERSION +INTERNAL-IP +EXTERNAL-IP +OS-IMAGE +KERNEL-VERSION +CONTAINER-RUNTIME"},
		{"configmaps", schema.GroupResource{Resource: "configmaps"}, "NAME DATA AGE"},
		{"secrets", schema.GroupResource{Resource: "secrets"}, "NAME TYPE DATA AGE"},
		{"serviceaccounts", schema.GroupResource{Resource: "serviceaccounts"}, "NAME AGE"},
		{"events", schema.GroupResource{Resource: "events"}, "LAST SEEN TYPE REASON OBJECT +SUBOBJECT +SOURCE MESSAGE +FIRST SEEN +COUNT +NAME"},
		{"events.k8s.io", schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "LAST SEEN TYPE REASON OBJECT +SUBOBJECT +SOURCE MESSAGE +FIRST SEEN +COUNT +NAME"},
		{"resourcequotas", schema.GroupResource{Resource: "resourcequotas"}, "NAME REQUEST LIMIT AGE"},
		{"persistentvolumeclaims", schema.GroupResource{Resource: "persistentvolumeclaims"}, "NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE +VOLUMEMODE"},
		{"persistentvolumes", schema.GroupResource{Resource: "persistentvolumes"}, "NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS REASON AGE +VOLUMEMODE"},
		{"replicationcontrollers", schema.GroupResource{Resource: "replicationcontrollers"}, "NAME DESIRED CURRENT READY AGE +CONTAINERS +IMAGES +SELECTOR"},
		{"podtemplates", schema.GroupResource{Resource: "podtemplates"}, "NAME CONTAINERS IMAGES POD LABELS"},
		{"deployments", schema.GroupResource{Group: "apps", Resource: "deployments"}, "NAME READY UP-TO-DATE AVAILABLE AGE +CONTAINERS +IMAGES +SELECTOR"},
		{"replicasets", schema.GroupResource{Group: "apps", Resource: "replicasets"}, "NAME DESIRED CURRENT READY AGE +CONTAINERS +IMAGES +SELECTOR"},
		{"statefulsets", schema.GroupResource{Group: "apps", Resource: "statefulsets"}, "NAME READY AGE +CONTAINERS +IMAGES"},
		{"daemonsets", schema.GroupResource{Group: "apps", Resource: "daemonsets"}, "NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE +CONTAINERS +IMAGES +SELECTOR"},
		{"controllerrevisions", schema.GroupResource{Group: "apps", Resource: "controllerrevisions"}, "NAME CONTROLLER REVISION AGE"},
		{"leases", schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "NAME HOLDER AGE"},
		{"endpointslices", schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}, "NAME ADDRESSTYPE PORTS ENDPOINTS AGE"},
		{"rolebindings", schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}, "NAME ROLE AGE +USERS +GROUPS +SERVICEACCOUNTS"},
		{"clusterrolebindings", schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}, "NAME ROLE AGE +USERS +GROUPS +SERVICEACCOUNTS"},
		{"roles", schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "roles"}, "NAME CREATED AT"},
		{"clusterroles", schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}, "NAME CREATED AT"},
		{"limitranges", schema.GroupResource{Resource: "limitranges"}, "NAME CREATED AT"},
		{"mutatingwebhookconfigurations", schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}, "NAME WEBHOOKS AGE"},
		{"validatingwebhookconfigurations", schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}, "NAME WEBHOOKS AGE"},
		{"validatingadmissionpolicies", schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}, "NAME VALIDATIONS PARAMKIND AGE"},
		{"validatingadmissionpolicybindings", schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}, "NAME POLICYNAME PARAMREF AGE"},
		{"priorityclasses", schema.GroupResource{Group: "scheduling.k8s.io", Resource: "priorityclasses"}, "NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY"},
		{"jobs", schema.GroupResource{Group: "batch", Resource: "jobs"}, "NAME STATUS COMPLETIONS DURATION AGE +CONTAINERS +IMAGES +SELECTOR"},
		{"cronjobs", schema.GroupResource{Group: "batch", Resource: "cronjobs"}, "NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE +CONTAINERS +IMAGES +SELECTOR"},
		{"ingresses", schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}, "NAME CLASS HOSTS ADDRESS PORTS AGE"},
		{"ingressclasses", schema.GroupResource{Group: "networking.k8s.io", Resource: "ingressclasses"}, "NAME CONTROLLER PARAMETERS AGE"},
		{"networkpolicies", schema.GroupResource{Group: "networking.k8s.io", Resource: "networkpolicies"}, "NAME POD-SELECTOR AGE"},
		{"poddisruptionbudgets", schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, "NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE"},
		{"custom resource", schema.GroupResource{Group: "example.com", Resource: "widgets"}, "NAME CREATED AT"},
		{"deployments in the wrong group", schema.GroupResource{Resource: "deployments"}, "NAME CREATED AT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range Columns(tc.gr) {
				h := strings.ToUpper(c.Name)
				if c.Priority > 0 {
					h = "+" + h
				}
				got = append(got, h)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("headers\n got %s\nwant %s", strings.Join(got, " "), tc.want)
			}
		})
	}
}

func TestColumnsAreWellFormed(t *testing.T) {
	validType := map[string]bool{"string": true, "integer": true, "number": true, "boolean": true, "date": true}
	grs := []schema.GroupResource{{Resource: "no-such-thing"}}
	for gr := range printers {
		grs = append(grs, gr)
	}
	for _, gr := range grs {
		t.Run(gr.String(), func(t *testing.T) {
			cols := Columns(gr)
			names := 0
			for _, c := range cols {
				if !validType[c.Type] {
					t.Errorf("column %q has type %q", c.Name, c.Type)
				}
				if c.Description == "" {
					t.Errorf("column %q has no description", c.Name)
				}
				if c.Format == "name" {
					names++
				}
			}
			if names != 1 {
				t.Errorf("%d columns with format name, want 1", names)
			}
		})
	}
}

func TestColumnsReturnsACopy(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	Columns(gr)[0].Name = "changed"
	if got := Columns(gr)[0].Name; got != "Name" {
		t.Fatalf("first column = %q after the caller changed its copy", got)
	}
}

func TestDefaultRows(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600)))
	runRows(t, schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "roles"}, []rowCase{
		{name: "role in UTC RFC 3339", obj: &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader", Namespace: "default", CreationTimestamp: created}}, want: []any{"pod-reader", "2026-01-02T02:04:05Z"}},
	})
	runRows(t, schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}, []rowCase{
		{name: "clusterrole", obj: &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "admin", CreationTimestamp: created}}, want: []any{"admin", "2026-01-02T02:04:05Z"}},
	})
	runRows(t, schema.GroupResource{Resource: "limitranges"}, []rowCase{
		{name: "limitrange", obj: &corev1.LimitRange{ObjectMeta: om("default", "limits")}, want: []any{"limits", "2026-03-04T11:50:00Z"}},
		{name: "zero timestamp", obj: &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "raw"}}, want: []any{"raw", "0001-01-01T00:00:00Z"}},
	})
	cr := &unstructured.Unstructured{}
	cr.SetAPIVersion("example.com/v1")
	cr.SetKind("Widget")
	cr.SetName("w1")
	cr.SetCreationTimestamp(ago(time.Hour))
	runRows(t, schema.GroupResource{Group: "example.com", Resource: "widgets"}, []rowCase{
		{name: "custom resource", obj: cr, want: []any{"w1", "2026-03-04T11:00:00Z"}},
	})
}

func TestRowsOfLists(t *testing.T) {
	pods := &corev1.PodList{Items: []corev1.Pod{*pod("a", "app"), *pod("b", "app", "side")}}
	crs := &unstructured.UnstructuredList{}
	for _, n := range []string{"w1", "w2", "w3"} {
		u := unstructured.Unstructured{}
		u.SetName(n)
		crs.Items = append(crs.Items, u)
	}
	cases := []struct {
		name      string
		gr        schema.GroupResource
		list      runtime.Object
		wantNames []string
		wantReady []string // second cell, for pods
	}{
		{name: "pod list", gr: schema.GroupResource{Resource: "pods"}, list: pods, wantNames: []string{"a", "b"}, wantReady: []string{"0/1", "0/2"}},
		{name: "empty list", gr: schema.GroupResource{Group: "apps", Resource: "deployments"}, list: &appsv1.DeploymentList{}, wantNames: []string{}},
		{name: "unstructured list, default printer", gr: schema.GroupResource{Group: "example.com", Resource: "widgets"}, list: crs, wantNames: []string{"w1", "w2", "w3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := Rows(tc.gr, tc.list, now)
			if err != nil {
				t.Fatalf("Rows: %v", err)
			}
			if rows == nil {
				t.Fatal("rows is nil, want an empty slice so it encodes as []")
			}
			names := []string{}
			for i, r := range rows {
				names = append(names, r.Cells[0].(string))
				if tc.wantReady != nil && r.Cells[1] != tc.wantReady[i] {
					t.Errorf("row %d READY = %v, want %s", i, r.Cells[1], tc.wantReady[i])
				}
			}
			if !reflect.DeepEqual(names, tc.wantNames) {
				t.Errorf("names = %v, want %v", names, tc.wantNames)
			}
		})
	}
}

// Typed printers accept the unstructured form of their objects too.
func TestRowsOfUnstructured(t *testing.T) {
	d := &appsv1.Deployment{
		ObjectMeta: om("default", "web"),
		Spec:       appsv1.DeploymentSpec{Replicas: ptr(int32(3)), Selector: webSelector, Template: webTemplate()},
		Status:     appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 2},
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: content}
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	want, err := Rows(gr, d, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		obj  runtime.Object
	}{
		{"object", u},
		{"list", &unstructured.UnstructuredList{Items: []unstructured.Unstructured{*u}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Rows(gr, tc.obj, now)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("rows = %#v, want %#v", got, want)
			}
		})
	}
}

func TestRowsErrors(t *testing.T) {
	t.Run("object without metadata is not acceptable", func(t *testing.T) {
		_, err := Rows(schema.GroupResource{Group: "example.com", Resource: "widgets"}, &metav1.Status{}, now)
		var se apierrors.APIStatus
		if !errors.As(err, &se) || se.Status().Code != http.StatusNotAcceptable || se.Status().Reason != "NotAcceptable" {
			t.Fatalf("err = %v, want 406 NotAcceptable", err)
		}
		if want := "the resource widgets.example.com does not support being converted to a Table"; se.Status().Message != want {
			t.Errorf("message = %q, want %q", se.Status().Message, want)
		}
	})
	t.Run("wrong type for the resource", func(t *testing.T) {
		if _, err := Rows(schema.GroupResource{Resource: "pods"}, &corev1.Service{}, now); err == nil {
			t.Fatal("printing a Service as a pod succeeded")
		}
	})
	t.Run("unconvertible unstructured", func(t *testing.T) {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": "three"}}}
		if _, err := Rows(schema.GroupResource{Group: "apps", Resource: "deployments"}, u, now); err == nil {
			t.Fatal("printing a malformed deployment succeeded")
		}
	})
}

func TestAge(t *testing.T) {
	cases := []struct {
		name string
		t    metav1.Time
		want string
	}{
		{"unset", metav1.Time{}, "<unknown>"},
		{"seconds", ago(45 * time.Second), "45s"},
		{"minutes and seconds", ago(3*time.Minute + 20*time.Second), "3m20s"},
		{"hours and minutes", ago(4*time.Hour + 5*time.Minute), "4h5m"},
		{"days", ago(30 * 24 * time.Hour), "30d"},
		{"clock skew", metav1.NewTime(now.Add(time.Minute)), "<invalid>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := age(tc.t, now); got != tc.want {
				t.Errorf("age = %q, want %q", got, tc.want)
			}
		})
	}
}
