package fieldmanager

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kpipe/kpipe/internal/request"
)

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: "app", Image: "nginx:1", Args: []string{"-a", "-b"},
			Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}, {ContainerPort: 53, Protocol: corev1.ProtocolUDP, Name: "dns"}},
			Env:   []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse("100m")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: apiresource.MustParse("64Mi")},
			},
			VolumeMounts:             []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			TerminationMessagePath:   "/dev/termination-log",
			TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy:          corev1.PullIfNotPresent,
		}},
		Volumes:       []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		Tolerations:   []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		RestartPolicy: corev1.RestartPolicyAlways,
		DNSPolicy:     corev1.DNSClusterFirst,
	}
}

// createFixtures are objects of several types as clients create them,
// with maps, keyed and atomic lists, nested templates, status and
// metadata that the field manager does not track.
func createFixtures() map[string]runtime.Object {
	meta := metav1.ObjectMeta{Name: "x", Namespace: "ns", Labels: map[string]string{"app": "x"}, Annotations: map[string]string{"a": "b"},
		Finalizers: []string{"f"}, OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "o", UID: "u1"}}}
	replicas := int32(2)
	return map[string]runtime.Object{
		"configmaps":      &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"a": "1", "b": "2"}, BinaryData: map[string][]byte{"c": {1}}},
		"configmaps/bare": &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: "ns"}},
		"secrets":         &corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeOpaque, StringData: map[string]string{"s": "t"}, Data: map[string][]byte{"d": []byte("e")}},
		"pods": &corev1.Pod{ObjectMeta: meta, Spec: podSpec(),
			Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}}},
		"services": &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, Selector: map[string]string{"app": "x"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}, {Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}},
		}},
		"deployments": &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{
			Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}}, Spec: podSpec()},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType},
		}, Status: appsv1.DeploymentStatus{Replicas: 1}},
		"daemonsets": &appsv1.DaemonSet{ObjectMeta: meta, Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"x", "y"}}}},
			Template: corev1.PodTemplateSpec{Spec: podSpec()}}},
		"roles": &rbacv1.Role{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "pods"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"*"}},
		}},
		"namespaces": &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{"kubernetes.io/metadata.name": "x"}},
			Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}}},
	}
}

// For every fixture, createFields records what kube's field manager
// records, but the time; with kube's manager names, an empty one and
// none at all.
func TestCreateFieldsMatchKube(t *testing.T) {
	s := newStage()
	groups := map[string][2]string{
		"configmaps": {"", "v1"}, "secrets": {"", "v1"}, "pods": {"", "v1"}, "services": {"", "v1"}, "namespaces": {"", "v1"},
		"deployments": {"apps", "v1"}, "daemonsets": {"apps", "v1"}, "roles": {"rbac.authorization.k8s.io", "v1"},
	}
	for name, obj := range createFixtures() {
		plural, _, _ := strings.Cut(name, "/")
		gv := groups[plural]
		res := resource(t, gv[0], gv[1], plural)
		for _, manager := range []string{"kubectl-client-side-apply", "", "ü-manager"} {
			got, want := obj.DeepCopyObject(), obj.DeepCopyObject()
			done, err := createFields(res, got, manager)
			if err != nil || !done {
				t.Fatalf("%s: createFields = %v, %v", name, done, err)
			}
			fm, err := s.manager(res, "")
			if err != nil {
				t.Fatal(err)
			}
			want = fm.UpdateNoErrors(res.New(), want, manager)
			if g, w := managedFields(got), managedFields(want); g != w {
				t.Errorf("%s, manager %q: createFields recorded\n%s\nkube's field manager\n%s", name, manager, g, w)
			}
			if got.GetObjectKind().GroupVersionKind() != obj.GetObjectKind().GroupVersionKind() {
				t.Errorf("%s: kind changed to %v", name, got.GetObjectKind().GroupVersionKind())
			}
		}
	}
}

// Objects that carry managedFields, and updates, go to kube's field
// manager; a create through the stage takes the direct way.
func TestCreateFieldsOnlyForNewObjectsWithoutManagedFields(t *testing.T) {
	cms := resource(t, "", "v1", "configmaps")
	cm := configMap(map[string]string{"k": "v"})
	cm.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{}}`)}}}
	if done, err := createFields(cms, cm, "x"); done || err != nil {
		t.Fatalf("with managedFields: %v %v, want the field manager to run", done, err)
	}
	if len(cm.ManagedFields) != 1 || cm.ManagedFields[0].Manager != "m" {
		t.Fatalf("createFields changed managedFields it declined: %+v", cm.ManagedFields)
	}

	s := newStage()
	CheckCreates = true
	defer func() { CheckCreates = false }()
	op := &request.Operation{Resource: cms, Namespace: "ns", Name: "x", Object: configMap(map[string]string{"k": "v"})}
	got, w := serve(t, s, op, "kubectl/v1.37")
	if w.Code != 200 {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	if e := entries(t, got.Object); e != `kubectl/Update/: {"f:data":{".":{},"f:k":{}}}` {
		t.Fatalf("create recorded %s", e)
	}
	if len(s.managers) != 1 {
		t.Fatalf("%d field managers built; the check builds one", len(s.managers))
	}
}
