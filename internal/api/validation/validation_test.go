package validation

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Messages quoted from apimachinery's name rules.
const (
	subdomainMsg = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	labelMsg     = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`
	configKeyMsg = `a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`
)

var (
	coreGK = func(kind string) schema.GroupKind { return schema.GroupKind{Kind: kind} }
	appsGK = func(kind string) schema.GroupKind { return schema.GroupKind{Group: "apps", Kind: kind} }
	rbacGK = func(kind string) schema.GroupKind {
		return schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: kind}
	}
	admissionGK = func(kind string) schema.GroupKind {
		return schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: kind}
	}
	discoveryGK   = schema.GroupKind{Group: "discovery.k8s.io", Kind: "EndpointSlice"}
	coordinatedGK = schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"}
	schedulingGK  = schema.GroupKind{Group: "scheduling.k8s.io", Kind: "PriorityClass"}
)

// --- defaulted fixtures ---

func ptr[T any](v T) *T { return &v }

func container(name string) corev1.Container {
	return corev1.Container{
		Name:                     name,
		Image:                    "nginx",
		TerminationMessagePath:   "/dev/termination-log",
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		ImagePullPolicy:          corev1.PullIfNotPresent,
	}
}

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{
		Containers:                    []corev1.Container{container("c")},
		RestartPolicy:                 corev1.RestartPolicyAlways,
		TerminationGracePeriodSeconds: ptr(int64(30)),
		DNSPolicy:                     corev1.DNSClusterFirst,
		SecurityContext:               &corev1.PodSecurityContext{},
		SchedulerName:                 corev1.DefaultSchedulerName,
		EnableServiceLinks:            ptr(true),
	}
}

func pod(mut ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: podSpec()}
	for _, m := range mut {
		m(p)
	}
	return p
}

func service(mut ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "default"},
		Spec: corev1.ServiceSpec{
			Ports:                 []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}},
			Selector:              map[string]string{"app": "web"},
			Type:                  corev1.ServiceTypeClusterIP,
			SessionAffinity:       corev1.ServiceAffinityNone,
			InternalTrafficPolicy: ptr(corev1.ServiceInternalTrafficPolicyCluster),
		},
	}
	for _, m := range mut {
		m(s)
	}
	return s
}

func configMap(mut ...func(*corev1.ConfigMap)) *corev1.ConfigMap {
	c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default"}, Data: map[string]string{"k": "v"}}
	for _, m := range mut {
		m(c)
	}
	return c
}

func deployment(mut ...func(*appsv1.Deployment)) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       podSpec(),
			},
			Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxUnavailable: ptr(intstr.FromString("25%")),
					MaxSurge:       ptr(intstr.FromString("25%")),
				},
			},
			RevisionHistoryLimit:    ptr(int32(10)),
			ProgressDeadlineSeconds: ptr(int32(600)),
		},
	}
	for _, m := range mut {
		m(d)
	}
	return d
}

func statefulSet(mut ...func(*appsv1.StatefulSet)) *appsv1.StatefulSet {
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}},
				Spec:       podSpec(),
			},
			PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				Type:          appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr(int32(0))},
			},
			RevisionHistoryLimit: ptr(int32(10)),
		},
	}
	for _, m := range mut {
		m(s)
	}
	return s
}

func daemonSet(mut ...func(*appsv1.DaemonSet)) *appsv1.DaemonSet {
	d := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
				Spec:       podSpec(),
			},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{
				Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{
					MaxUnavailable: ptr(intstr.FromInt32(1)),
					MaxSurge:       ptr(intstr.FromInt32(0)),
				},
			},
			RevisionHistoryLimit: ptr(int32(10)),
		},
	}
	for _, m := range mut {
		m(d)
	}
	return d
}

func roleBinding(roleName string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "rb", Namespace: "default"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: roleName},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
	}
}

func webhookConfig(mut ...func(*admissionregistrationv1.ValidatingWebhook)) *admissionregistrationv1.ValidatingWebhookConfiguration {
	h := admissionregistrationv1.ValidatingWebhook{
		Name: "hook.example.com",
		ClientConfig: admissionregistrationv1.WebhookClientConfig{
			Service: &admissionregistrationv1.ServiceReference{Namespace: "default", Name: "hook", Path: ptr("/validate"), Port: ptr(int32(443))},
		},
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}, Scope: ptr(admissionregistrationv1.AllScopes)},
		}},
		FailurePolicy:           ptr(admissionregistrationv1.Fail),
		MatchPolicy:             ptr(admissionregistrationv1.Equivalent),
		NamespaceSelector:       &metav1.LabelSelector{},
		ObjectSelector:          &metav1.LabelSelector{},
		SideEffects:             ptr(admissionregistrationv1.SideEffectClassNone),
		TimeoutSeconds:          ptr(int32(10)),
		AdmissionReviewVersions: []string{"v1"},
	}
	for _, m := range mut {
		m(&h)
	}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "w"},
		Webhooks:   []admissionregistrationv1.ValidatingWebhook{h},
	}
}

func endpointSlice(mut ...func(*discoveryv1.EndpointSlice)) *discoveryv1.EndpointSlice {
	e := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "es", Namespace: "default"},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(80))}},
	}
	for _, m := range mut {
		m(e)
	}
	return e
}

// withRV marks a copy as an update carrying a resourceVersion, as kpipe sends
// it to validation.
func withRV[T metav1.Object](o T) T {
	o.SetResourceVersion("2")
	return o
}

type op int

const (
	create op = iota
	update
	status
)

type testCase struct {
	name string
	op   op
	obj  runtime.Object
	old  runtime.Object
	gk   schema.GroupKind
	// want is the full kube-apiserver message; "" means valid.
	want string
	// prefix, when set, is checked instead of want.
	prefix string
}

func run(tc testCase) field.ErrorList {
	switch tc.op {
	case update:
		return ValidateUpdate(tc.obj, tc.old)
	case status:
		return ValidateStatusUpdate(tc.obj, tc.old)
	default:
		return ValidateCreate(tc.obj)
	}
}

func check(t *testing.T, cases []testCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := run(tc)
			got := ""
			if len(errs) > 0 {
				m, err := metaName(tc.obj)
				if err != nil {
					t.Fatal(err)
				}
				got = apierrors.NewInvalid(tc.gk, m, errs).Error()
			}
			if tc.prefix != "" {
				if !strings.HasPrefix(got, tc.prefix) {
					t.Fatalf("got:\n%s\nwant prefix:\n%s", got, tc.prefix)
				}
				return
			}
			if got != tc.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func metaName(o runtime.Object) (string, error) {
	m, err := meta.Accessor(o)
	if err != nil {
		return "", err
	}
	return m.GetName(), nil
}

func TestObjectMeta(t *testing.T) {
	long := strings.Repeat("a", 254)
	check(t, []testCase{
		{name: "configmap name invalid", obj: configMap(func(c *corev1.ConfigMap) { c.Name = "Bad_Name" }), gk: coreGK("ConfigMap"),
			want: `ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": ` + subdomainMsg},
		{name: "name of 254 characters", obj: configMap(func(c *corev1.ConfigMap) { c.Name = long }), gk: coreGK("ConfigMap"),
			want: `ConfigMap "` + long + `" is invalid: metadata.name: Invalid value: "` + long + `": must be no more than 253 characters`},
		{name: "namespace on cluster-scoped namespace", obj: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Namespace: "default"}}, gk: coreGK("Namespace"),
			want: `Namespace "ns" is invalid: metadata.namespace: Forbidden: not allowed on this type`},
		{name: "namespace on cluster role", obj: &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cr", Namespace: "default"}}, gk: rbacGK("ClusterRole"),
			want: `ClusterRole.rbac.authorization.k8s.io "cr" is invalid: metadata.namespace: Forbidden: not allowed on this type`},
		{name: "namespaced type without namespace", obj: configMap(func(c *corev1.ConfigMap) { c.Namespace = "" }), gk: coreGK("ConfigMap"),
			want: `ConfigMap "cm" is invalid: metadata.namespace: Required value`},
		{name: "missing name", obj: configMap(func(c *corev1.ConfigMap) { c.Name = "" }), gk: coreGK("ConfigMap"),
			want: `ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required`},
		{name: "bad label", obj: configMap(func(c *corev1.ConfigMap) { c.Labels = map[string]string{"a": "b c"} }), gk: coreGK("ConfigMap"),
			want: `ConfigMap "cm" is invalid: metadata.labels: Invalid value: "b c": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		{name: "annotations over 256KiB", obj: configMap(func(c *corev1.ConfigMap) { c.Annotations = map[string]string{"a": strings.Repeat("x", 256*1024)} }), gk: coreGK("ConfigMap"),
			want: `ConfigMap "cm" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes`},
		{name: "unqualified finalizer", obj: configMap(func(c *corev1.ConfigMap) { c.Finalizers = []string{"custom"} }), gk: coreGK("ConfigMap"),
			want: `ConfigMap "cm" is invalid: metadata.finalizers[0]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified`},
		{name: "lease skips core finalizer rule", obj: &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l", Namespace: "default", Finalizers: []string{"custom"}}}, gk: coordinatedGK},
		{name: "owner reference without uid", obj: configMap(func(c *corev1.ConfigMap) {
			c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p"}}
		}), gk: coreGK("ConfigMap"),
			want: `ConfigMap "cm" is invalid: metadata.ownerReferences[0].uid: Required value: must not be empty`},
		{name: "update without resourceVersion", op: update, obj: configMap(), old: configMap(), gk: coreGK("ConfigMap"),
			want: `ConfigMap "cm" is invalid: metadata.resourceVersion: Invalid value: "": must be specified for an update`},
		{name: "update renames", op: update, obj: withRV(configMap(func(c *corev1.ConfigMap) { c.Name = "other" })), old: configMap(), gk: coreGK("ConfigMap"),
			want: `ConfigMap "other" is invalid: metadata.name: Invalid value: "other": field is immutable`},
	})
}

func TestConfigMapAndSecret(t *testing.T) {
	immutable := func(c *corev1.ConfigMap) { c.Immutable = ptr(true) }
	check(t, []testCase{
		{name: "valid", obj: configMap(), gk: coreGK("ConfigMap")},
		{name: "key invalid", obj: configMap(func(c *corev1.ConfigMap) { c.Data = map[string]string{"bad key": "v"} }), gk: coreGK("ConfigMap"),
			want: `ConfigMap "cm" is invalid: data[bad key]: Invalid value: "bad key": ` + configKeyMsg},
		{name: "key in data and binaryData", obj: configMap(func(c *corev1.ConfigMap) { c.BinaryData = map[string][]byte{"k": nil} }), gk: coreGK("ConfigMap"),
			want: `ConfigMap "cm" is invalid: data[k]: Invalid value: "k": duplicate of key present in binaryData`},
		{name: "over 1MiB", obj: configMap(func(c *corev1.ConfigMap) { c.Data = map[string]string{"k": strings.Repeat("x", 1<<20+1)} }), gk: coreGK("ConfigMap"),
			want: `ConfigMap "cm" is invalid: []: Too long: may not be more than 1048576 bytes`},
		{name: "immutable data change", op: update, obj: withRV(configMap(immutable, func(c *corev1.ConfigMap) { c.Data["k"] = "w" })), old: configMap(immutable), gk: coreGK("ConfigMap"),
			want: "ConfigMap \"cm\" is invalid: data: Forbidden: field is immutable when `immutable` is set"},
		{name: "immutable unset", op: update, obj: withRV(configMap()), old: configMap(immutable), gk: coreGK("ConfigMap"),
			want: "ConfigMap \"cm\" is invalid: immutable: Forbidden: field is immutable when `immutable` is set"},
		{name: "mutable update", op: update, obj: withRV(configMap(func(c *corev1.ConfigMap) { c.Data["k"] = "w" })), old: configMap(), gk: coreGK("ConfigMap")},
		{name: "secret tls missing tls.key", obj: &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{corev1.TLSCertKey: []byte("cert")},
		}, gk: coreGK("Secret"),
			want: `Secret "s" is invalid: data[tls.key]: Required value`},
		{name: "secret service account token without name", obj: &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"},
			Type:       corev1.SecretTypeServiceAccountToken,
		}, gk: coreGK("Secret"),
			want: `Secret "s" is invalid: metadata.annotations[kubernetes.io/service-account.name]: Required value`},
		{name: "secret dockerconfigjson not json", obj: &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"},
			Type:       corev1.SecretTypeDockerConfigJson,
			Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte("nope")},
		}, gk: coreGK("Secret"),
			want: `Secret "s" is invalid: data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": invalid character 'o' in literal null (expecting 'u')`},
		{name: "secret type is immutable", op: update,
			obj: withRV(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"}, Type: corev1.SecretTypeBasicAuth, Data: map[string][]byte{"username": nil}}),
			old: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"}, Type: corev1.SecretTypeOpaque}, gk: coreGK("Secret"),
			want: `Secret "s" is invalid: type: Invalid value: "kubernetes.io/basic-auth": field is immutable`},
	})
}

func TestPod(t *testing.T) {
	check(t, []testCase{
		{name: "valid", obj: pod(), gk: coreGK("Pod")},
		{name: "missing container image", obj: pod(func(p *corev1.Pod) { p.Spec.Containers[0].Image = "" }), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.containers[0].image: Required value`},
		{name: "duplicate container name", obj: pod(func(p *corev1.Pod) { p.Spec.Containers = append(p.Spec.Containers, container("c")) }), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.containers[1].name: Duplicate value: "c"`},
		{name: "no containers", obj: pod(func(p *corev1.Pod) { p.Spec.Containers = nil }), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.containers: Required value`},
		{name: "init container name clashes", obj: pod(func(p *corev1.Pod) { p.Spec.InitContainers = []corev1.Container{container("c")} }), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.initContainers[0].name: Duplicate value: "c"`},
		{name: "bad container name", obj: pod(func(p *corev1.Pod) { p.Spec.Containers[0].Name = "C_1" }), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.containers[0].name: Invalid value: "C_1": ` + labelMsg},
		{name: "restart policy", obj: pod(func(p *corev1.Pod) { p.Spec.RestartPolicy = "Sometimes" }), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"`},
		{name: "dns policy", obj: pod(func(p *corev1.Pod) { p.Spec.DNSPolicy = "Nearby" }), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.dnsPolicy: Unsupported value: "Nearby": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"`},
		{name: "mount of unknown volume", obj: pod(func(p *corev1.Pod) {
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		}), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.containers[0].volumeMounts[0].name: Not found: "data"`},
		{name: "volume with two sources", obj: pod(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{
				EmptyDir:  &corev1.EmptyDirVolumeSource{},
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}},
			}}}
		}), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.volumes[0].configMap: Forbidden: may not specify more than 1 volume type`},
		{name: "duplicate volume", obj: pod(func(p *corev1.Pod) {
			v := corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
			p.Spec.Volumes = []corev1.Volume{v, v}
		}), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.volumes[1].name: Duplicate value: "v"`},
		{name: "service account token volume", obj: pod(func(p *corev1.Pod) {
			p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount = "default", "default"
			p.Spec.Volumes = []corev1.Volume{{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: ptr(int32(0644)),
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr(int64(3607)), Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
				},
			}}}}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}}
		}), gk: coreGK("Pod")},
		{name: "requests above limits", obj: pod(func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			}
		}), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`},
		{name: "env name", obj: pod(func(p *corev1.Pod) { p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A=B"}} }), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.containers[0].env[0].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '='`},
		{name: "probe without handler", obj: pod(func(p *corev1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &corev1.Probe{TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}
		}), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.containers[0].livenessProbe: Required value: must specify a handler type`},
		{name: "liveness success threshold", obj: pod(func(p *corev1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}},
				TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 2, FailureThreshold: 3}
		}), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1`},
		{name: "duplicate port names", obj: pod(func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{
				{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP},
				{Name: "http", ContainerPort: 81, Protocol: corev1.ProtocolTCP},
			}
		}), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.containers[0].ports[1].name: Duplicate value: "http"`},
		{name: "port out of range", obj: pod(func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 70000, Protocol: corev1.ProtocolTCP}}
		}), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive`},
		{name: "several errors in kube's order", obj: pod(func(p *corev1.Pod) {
			p.Name = "P"
			p.Spec.Containers[0].Image = ""
			p.Spec.RestartPolicy = ""
		}), gk: coreGK("Pod"),
			want: `Pod "P" is invalid: [metadata.name: Invalid value: "P": ` + subdomainMsg + `, spec.containers[0].image: Required value, spec.restartPolicy: Required value]`},
		{name: "ephemeral containers on create", obj: pod(func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon(container("debug"))}}
		}), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create`},
		{name: "update image", op: update, obj: withRV(pod(func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:2" })), old: pod(), gk: coreGK("Pod")},
		{name: "update other spec field", op: update, obj: withRV(pod(func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever })), old: pod(), gk: coreGK("Pod"),
			prefix: "Pod \"p\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"},
		{name: "update adds container", op: update, obj: withRV(pod(func(p *corev1.Pod) { p.Spec.Containers = append(p.Spec.Containers, container("d")) })), old: pod(), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.containers: Forbidden: pod updates may not add or remove containers`},
		{name: "status with bad condition type", op: status, obj: withRV(pod(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: "bad type", Status: corev1.ConditionTrue}}
		})), old: pod(), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: status.conditions[0].Type: Invalid value: "bad type": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
		{name: "status may not bind", op: status, obj: withRV(pod(func(p *corev1.Pod) { p.Spec.NodeName = "n1" })), old: pod(), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: status.nodeName: Forbidden: may not be changed directly`},
	})
}

func TestService(t *testing.T) {
	check(t, []testCase{
		{name: "valid", obj: service(), gk: coreGK("Service")},
		{name: "name invalid", obj: service(func(s *corev1.Service) { s.Name = "Bad_Name" }), gk: coreGK("Service"),
			want: `Service "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": ` + labelMsg},
		// RelaxedServiceNameValidation is GA in v1.37.
		{name: "name may start with a digit", obj: service(func(s *corev1.Service) { s.Name = "1svc" }), gk: coreGK("Service")},
		{name: "no ports", obj: service(func(s *corev1.Service) { s.Spec.Ports = nil }), gk: coreGK("Service"),
			want: `Service "svc" is invalid: spec.ports: Required value`},
		{name: "headless without ports", obj: service(func(s *corev1.Service) {
			s.Spec.Ports = nil
			s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ClusterIPNone, []string{corev1.ClusterIPNone}
		}), gk: coreGK("Service")},
		{name: "external name without ports", obj: service(func(s *corev1.Service) {
			s.Spec.Ports, s.Spec.Selector, s.Spec.InternalTrafficPolicy = nil, nil, nil
			s.Spec.Type, s.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.com."
		}), gk: coreGK("Service")},
		{name: "port out of range", obj: service(func(s *corev1.Service) { s.Spec.Ports[0].Port = 70000 }), gk: coreGK("Service"),
			want: `Service "svc" is invalid: spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive`},
		{name: "protocol", obj: service(func(s *corev1.Service) { s.Spec.Ports[0].Protocol = "HTTP" }), gk: coreGK("Service"),
			want: `Service "svc" is invalid: spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"`},
		{name: "type", obj: service(func(s *corev1.Service) { s.Spec.Type = "Magic" }), gk: coreGK("Service"),
			want: `Service "svc" is invalid: spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"`},
		{name: "two unnamed ports", obj: service(func(s *corev1.Service) {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(443)})
		}), gk: coreGK("Service"),
			want: `Service "svc" is invalid: [spec.ports[0].name: Required value, spec.ports[1].name: Required value]`},
		{name: "duplicate port", obj: service(func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{
				{Name: "a", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)},
				{Name: "b", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(81)},
			}
		}), gk: coreGK("Service"),
			want: `Service "svc" is invalid: spec.ports[1]: Duplicate value: {"Name":"","Protocol":"TCP","AppProtocol":null,"Port":80,"TargetPort":0,"NodePort":0}`},
		{name: "clusterIP None with NodePort", obj: service(func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
			s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ClusterIPNone, []string{corev1.ClusterIPNone}
		}), gk: coreGK("Service"),
			want: `Service "svc" is invalid: spec.clusterIPs[0]: Invalid value: "None": may not be set to 'None' for NodePort services`},
		{name: "nodePort on ClusterIP", obj: service(func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30080 }), gk: coreGK("Service"),
			want: "Service \"svc\" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"},
		{name: "clusterIP changed", op: update,
			obj: withRV(service(func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.2", []string{"10.0.0.2"} })),
			old: service(func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.1", []string{"10.0.0.1"} }), gk: coreGK("Service"),
			want: `Service "svc" is invalid: spec.clusterIPs[0]: Invalid value: ["10.0.0.2"]: may not change once set`},
		{name: "local load balancer without a health check port, which the allocator fills in", obj: service(func(s *corev1.Service) {
			s.Spec.Type, s.Spec.AllocateLoadBalancerNodePorts = corev1.ServiceTypeLoadBalancer, ptr(true)
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		}), gk: coreGK("Service")},
		{name: "health check port out of range", obj: service(func(s *corev1.Service) {
			s.Spec.Type, s.Spec.AllocateLoadBalancerNodePorts = corev1.ServiceTypeLoadBalancer, ptr(true)
			s.Spec.ExternalTrafficPolicy, s.Spec.HealthCheckNodePort = corev1.ServiceExternalTrafficPolicyLocal, 70000
		}), gk: coreGK("Service"),
			want: `Service "svc" is invalid: spec.healthCheckNodePort: Invalid value: 70000: must be between 1 and 65535, inclusive`},
		{name: "status ingress on ClusterIP", op: status,
			obj: withRV(service(func(s *corev1.Service) {
				s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "1.2.3.4", IPMode: ptr(corev1.LoadBalancerIPModeVIP)}}
			})), old: service(), gk: coreGK("Service"),
			want: "Service \"svc\" is invalid: status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'"},
	})
}

func TestOtherCore(t *testing.T) {
	check(t, []testCase{
		{name: "endpoints subset without addresses", obj: &corev1.Endpoints{
			ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "default"},
			Subsets:    []corev1.EndpointSubset{{Ports: []corev1.EndpointPort{{Port: 80, Protocol: corev1.ProtocolTCP}}}},
		}, gk: coreGK("Endpoints"),
			want: "Endpoints \"svc\" is invalid: subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`"},
		{name: "service account name", obj: &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "Bad", Namespace: "default"}}, gk: coreGK("ServiceAccount"),
			want: `ServiceAccount "Bad" is invalid: metadata.name: Invalid value: "Bad": ` + subdomainMsg},
		{name: "event namespaces disagree", obj: &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "p.1", Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "other", Name: "p"},
		}, gk: coreGK("Event"),
			want: `Event "p.1" is invalid: involvedObject.namespace: Invalid value: "other": does not match event.namespace`},
		{name: "event names are path segments", obj: &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "Pod.Upper_case", Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p"},
		}, gk: coreGK("Event")},
		{name: "node taint effect", obj: &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "n1"},
			Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "k", Effect: "Sometimes"}}},
		}, gk: coreGK("Node"),
			want: `Node "n1" is invalid: metadata.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`},
		{name: "namespace name", obj: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a.b"}}, gk: coreGK("Namespace"),
			want: `Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots`},
		{name: "namespace status phase", op: status,
			obj: withRV(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}),
			old: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}, gk: coreGK("Namespace"),
			want: "Namespace \"ns\" is invalid: status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty"},
		{name: "limit range min above max", obj: &corev1.LimitRange{
			ObjectMeta: metav1.ObjectMeta{Name: "lr", Namespace: "default"},
			Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
				Type: corev1.LimitTypeContainer,
				Min:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
				Max:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			}}},
		}, gk: coreGK("LimitRange"),
			want: `LimitRange "lr" is invalid: spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1`},
		{name: "quota resource name", obj: &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "default"},
			Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"widgets": resource.MustParse("1")}},
		}, gk: coreGK("ResourceQuota"),
			want: `ResourceQuota "q" is invalid: [spec.hard[widgets]: Invalid value: "widgets": must be a standard resource type or fully qualified, spec.hard[widgets]: Invalid value: "widgets": must be a standard resource for quota]`},
		{name: "pvc without access modes and storage", obj: &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"},
			Spec:       corev1.PersistentVolumeClaimSpec{VolumeMode: ptr(corev1.PersistentVolumeFilesystem)},
		}, gk: coreGK("PersistentVolumeClaim"),
			want: `PersistentVolumeClaim "data" is invalid: [spec.accessModes: Required value: at least 1 access mode is required, spec.resources[storage]: Required value]`},
	})
}

func TestApps(t *testing.T) {
	check(t, []testCase{
		{name: "valid deployment", obj: deployment(), gk: appsGK("Deployment")},
		{name: "deployment selector mismatch", obj: deployment(func(d *appsv1.Deployment) { d.Spec.Template.Labels = map[string]string{"app": "other"} }), gk: appsGK("Deployment"),
			want: "Deployment.apps \"web\" is invalid: spec.template.metadata.labels: Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`"},
		{name: "deployment without selector", obj: deployment(func(d *appsv1.Deployment) { d.Spec.Selector = nil }), gk: appsGK("Deployment"),
			// A nil selector selects nothing, so kube also reports the mismatch.
			want: "Deployment.apps \"web\" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`]"},
		{name: "deployment negative replicas", obj: deployment(func(d *appsv1.Deployment) { d.Spec.Replicas = ptr(int32(-1)) }), gk: appsGK("Deployment"),
			want: `Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`},
		{name: "deployment template restart policy", obj: deployment(func(d *appsv1.Deployment) { d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever }), gk: appsGK("Deployment"),
			want: `Deployment.apps "web" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"`},
		{name: "deployment missing image in template", obj: deployment(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "" }), gk: appsGK("Deployment"),
			want: `Deployment.apps "web" is invalid: spec.template.spec.containers[0].image: Required value`},
		{name: "deployment strategy both zero", obj: deployment(func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr(intstr.FromInt32(0)), MaxSurge: ptr(intstr.FromInt32(0))}
		}), gk: appsGK("Deployment"),
			want: "Deployment.apps \"web\" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0"},
		{name: "deployment selector is immutable", op: update,
			obj: withRV(deployment(func(d *appsv1.Deployment) {
				d.Spec.Selector.MatchLabels = map[string]string{"app": "web2"}
				d.Spec.Template.Labels = map[string]string{"app": "web2"}
			})), old: deployment(), gk: appsGK("Deployment"),
			want: `Deployment.apps "web" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"web2"}}: field is immutable`},
		{name: "deployment status replicas", op: status,
			obj: withRV(deployment(func(d *appsv1.Deployment) {
				d.Status = appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 2, AvailableReplicas: 1}
			})),
			old: deployment(), gk: appsGK("Deployment"),
			want: `Deployment.apps "web" is invalid: status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas`},
		{name: "replicaset selector mismatch", obj: &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "default"},
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "c"}}, Spec: podSpec()}},
		}, gk: appsGK("ReplicaSet"),
			want: "ReplicaSet.apps \"rs\" is invalid: spec.template.metadata.labels: Invalid value: {\"a\":\"c\"}: `selector` does not match template `labels`"},
		// serviceName has been optional since v1.33.
		{name: "statefulset without serviceName", obj: statefulSet(), gk: appsGK("StatefulSet")},
		{name: "statefulset name is a label", obj: statefulSet(func(s *appsv1.StatefulSet) { s.Name = "db.v1" }), gk: appsGK("StatefulSet"),
			want: `StatefulSet.apps "db.v1" is invalid: metadata.name: Invalid value: "db.v1": must not contain dots`},
		{name: "statefulset serviceName is immutable", op: update,
			obj: withRV(statefulSet(func(s *appsv1.StatefulSet) { s.Spec.ServiceName = "db" })), old: statefulSet(), gk: appsGK("StatefulSet"),
			want: `StatefulSet.apps "db" is invalid: spec.serviceName: Invalid value: "db": field is immutable`},
		{name: "valid daemonset", obj: daemonSet(), gk: appsGK("DaemonSet")},
		{name: "daemonset surge and unavailable", obj: daemonSet(func(d *appsv1.DaemonSet) {
			d.Spec.UpdateStrategy.RollingUpdate.MaxSurge = ptr(intstr.FromInt32(1))
		}), gk: appsGK("DaemonSet"),
			want: `DaemonSet.apps "agent" is invalid: spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero`},
	})
}

func TestRBAC(t *testing.T) {
	check(t, []testCase{
		{name: "valid binding", obj: roleBinding("reader"), gk: rbacGK("RoleBinding")},
		{name: "rolebinding roleRef change", op: update, obj: withRV(roleBinding("writer")), old: roleBinding("reader"), gk: rbacGK("RoleBinding"),
			want: `RoleBinding.rbac.authorization.k8s.io "rb" is invalid: roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"Role","Name":"writer"}: field is immutable`},
		{name: "clusterrolebinding roleRef kind", obj: &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "crb"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "r"},
		}, gk: rbacGK("ClusterRoleBinding"),
			want: `ClusterRoleBinding.rbac.authorization.k8s.io "crb" is invalid: roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"`},
		{name: "subject kind", obj: func() runtime.Object {
			b := roleBinding("reader")
			b.Subjects[0].Kind = "Robot"
			return b
		}(), gk: rbacGK("RoleBinding"),
			want: `RoleBinding.rbac.authorization.k8s.io "rb" is invalid: subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"`},
		{name: "service account subject needs namespace in cluster binding", obj: &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "crb"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "default"}},
		}, gk: rbacGK("ClusterRoleBinding"),
			want: `ClusterRoleBinding.rbac.authorization.k8s.io "crb" is invalid: subjects[0].namespace: Required value`},
		// Declarative (beta) errors come after the handwritten ones.
		{name: "rule without verbs or groups", obj: &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "default"},
			Rules:      []rbacv1.PolicyRule{{Resources: []string{"pods"}}},
		}, gk: rbacGK("Role"),
			want: `Role.rbac.authorization.k8s.io "r" is invalid: [rules[0].apiGroups: Required value: resource rules must supply at least one api group, rules[0].verbs: Required value]`},
		{name: "non-resource URLs in a role", obj: &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "default"},
			Rules:      []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}},
		}, gk: rbacGK("Role"),
			want: `Role.rbac.authorization.k8s.io "r" is invalid: rules[0].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs`},
		{name: "non-resource URLs in a cluster role", obj: &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "system:health"},
			Rules:      []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}},
		}, gk: rbacGK("ClusterRole")},
		{name: "role name path segment", obj: &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "a/b", Namespace: "default"}}, gk: rbacGK("Role"),
			want: `Role.rbac.authorization.k8s.io "a/b" is invalid: metadata.name: Invalid value: "a/b": may not contain '/'`},
	})
}

func TestDiscoveryCoordinationScheduling(t *testing.T) {
	check(t, []testCase{
		{name: "valid slice", obj: endpointSlice(), gk: discoveryGK},
		{name: "slice address type", obj: endpointSlice(func(e *discoveryv1.EndpointSlice) { e.AddressType = "IPv5" }), gk: discoveryGK,
			want: `EndpointSlice.discovery.k8s.io "es" is invalid: addressType: Unsupported value: "IPv5": supported values: "FQDN", "IPv4", "IPv6"`},
		{name: "slice endpoint without addresses", obj: endpointSlice(func(e *discoveryv1.EndpointSlice) {
			e.Endpoints = []discoveryv1.Endpoint{{}, {Addresses: []string{"10.0.0.300"}}}
		}), gk: discoveryGK,
			want: `EndpointSlice.discovery.k8s.io "es" is invalid: [endpoints[1].addresses[0]: Invalid value: "10.0.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff), endpoints[0].addresses: Required value]`},
		{name: "slice address type is immutable", op: update,
			obj: withRV(endpointSlice(func(e *discoveryv1.EndpointSlice) {
				e.AddressType = discoveryv1.AddressTypeFQDN
				e.Endpoints[0].Addresses = []string{"example.com"}
			})), old: endpointSlice(), gk: discoveryGK,
			want: `EndpointSlice.discovery.k8s.io "es" is invalid: addressType: Invalid value: null: field is immutable`},
		{name: "lease duration", obj: &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "l", Namespace: "kube-node-lease"},
			Spec:       coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr(int32(0))},
		}, gk: coordinatedGK,
			want: `Lease.coordination.k8s.io "l" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0`},
		{name: "priority above user range", obj: &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "pc"}, Value: 1000000001}, gk: schedulingGK,
			want: `PriorityClass.scheduling.k8s.io "pc" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000`},
		{name: "system prefix", obj: &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-foo"}, Value: 10}, gk: schedulingGK,
			want: `PriorityClass.scheduling.k8s.io "system-foo" is invalid: metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-foo is not a known system priority class`},
		{name: "system class", obj: &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-node-critical"}, Value: 2000001000}, gk: schedulingGK},
		{name: "priority value is immutable", op: update,
			obj: withRV(&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "pc"}, Value: 2}),
			old: &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "pc"}, Value: 1}, gk: schedulingGK,
			want: `PriorityClass.scheduling.k8s.io "pc" is invalid: value: Forbidden: may not be changed in an update.`},
	})
}

func TestAdmissionRegistration(t *testing.T) {
	check(t, []testCase{
		{name: "valid webhook", obj: webhookConfig(), gk: admissionGK("ValidatingWebhookConfiguration")},
		{name: "webhook without side effects or client", obj: webhookConfig(func(h *admissionregistrationv1.ValidatingWebhook) {
			h.SideEffects = nil
			h.ClientConfig = admissionregistrationv1.WebhookClientConfig{}
		}), gk: admissionGK("ValidatingWebhookConfiguration"),
			want: `ValidatingWebhookConfiguration.admissionregistration.k8s.io "w" is invalid: [webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun, webhooks[0].clientConfig: Required value: exactly one of url or service is required]`},
		{name: "webhook url and service", obj: webhookConfig(func(h *admissionregistrationv1.ValidatingWebhook) {
			h.ClientConfig.URL = ptr("https://example.com/hook")
		}), gk: admissionGK("ValidatingWebhookConfiguration"),
			want: `ValidatingWebhookConfiguration.admissionregistration.k8s.io "w" is invalid: webhooks[0].clientConfig: Required value: exactly one of url or service is required`},
		{name: "webhook name not qualified", obj: webhookConfig(func(h *admissionregistrationv1.ValidatingWebhook) { h.Name = "hook" }), gk: admissionGK("ValidatingWebhookConfiguration"),
			want: `ValidatingWebhookConfiguration.admissionregistration.k8s.io "w" is invalid: webhooks[0].name: Invalid value: "hook": should be a domain with at least three segments separated by dots`},
		{name: "webhook review versions", obj: webhookConfig(func(h *admissionregistrationv1.ValidatingWebhook) { h.AdmissionReviewVersions = nil }), gk: admissionGK("ValidatingWebhookConfiguration"),
			want: `ValidatingWebhookConfiguration.admissionregistration.k8s.io "w" is invalid: webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1`},
		{name: "webhook operation", obj: webhookConfig(func(h *admissionregistrationv1.ValidatingWebhook) {
			h.Rules[0].Operations = []admissionregistrationv1.OperationType{"PATCH"}
		}), gk: admissionGK("ValidatingWebhookConfiguration"),
			want: `ValidatingWebhookConfiguration.admissionregistration.k8s.io "w" is invalid: webhooks[0].rules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"`},
		{name: "duplicate webhook names", obj: func() runtime.Object {
			c := webhookConfig()
			c.Webhooks = append(c.Webhooks, c.Webhooks[0])
			return c
		}(), gk: admissionGK("ValidatingWebhookConfiguration"),
			want: `ValidatingWebhookConfiguration.admissionregistration.k8s.io "w" is invalid: webhooks[1].name: Duplicate value: "hook.example.com"`},
		{name: "binding without policy or actions", obj: &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "b"},
			Spec:       admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{ParamRef: &admissionregistrationv1.ParamRef{Name: "p"}},
		}, gk: admissionGK("ValidatingAdmissionPolicyBinding"),
			want: `ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "b" is invalid: [spec.paramRef.parameterNotFoundAction: Required value, spec.policyName: Required value, spec.validationActions: Required value]`},
		{name: "policy without validations", obj: &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "p"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr(admissionregistrationv1.Fail),
				MatchConstraints: &admissionregistrationv1.MatchResources{
					MatchPolicy: ptr(admissionregistrationv1.Equivalent), NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
					ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: webhookConfig().Webhooks[0].Rules[0]}},
				},
			},
		}, gk: admissionGK("ValidatingAdmissionPolicy"),
			want: `ValidatingAdmissionPolicy.admissionregistration.k8s.io "p" is invalid: [spec.validations: Required value: validations or auditAnnotations must contain at least one item, spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item]`},
		{name: "static suffix reserved", obj: func() runtime.Object {
			c := webhookConfig()
			c.Name = "w.static.k8s.io"
			return c
		}(), gk: admissionGK("ValidatingWebhookConfiguration"),
			want: `ValidatingWebhookConfiguration.admissionregistration.k8s.io "w.static.k8s.io" is invalid: metadata.name: Invalid value: "w.static.k8s.io": names ending with ".static.k8s.io" are reserved for static manifest-based configurations and cannot be managed via the API`},
	})
}

func TestUnknownAndMismatchedTypes(t *testing.T) {
	if errs := ValidateCreate(&corev1.Binding{}); errs != nil {
		t.Fatalf("unknown type: got %v", errs)
	}
	errs := ValidateUpdate(configMap(), &corev1.Secret{})
	if len(errs) != 1 || errs[0].Type != field.ErrorTypeInternal {
		t.Fatalf("mismatched update: got %v", errs)
	}
	if errs := ValidateCreate((*corev1.ConfigMap)(nil)); errs != nil {
		t.Fatalf("nil object: got %v", errs)
	}
}

func TestQuirksKeptFromKube(t *testing.T) {
	hostPort := func(p *corev1.Pod) {
		c := container("d")
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
		c.Ports = []corev1.ContainerPort{{ContainerPort: 81, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
		p.Spec.Containers = append(p.Spec.Containers, c)
	}
	check(t, []testCase{
		{name: "host port clash", obj: pod(hostPort), gk: coreGK("Pod"),
			want: `Pod "p" is invalid: spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"`},
		{name: "unchanged endpoints are not revalidated", op: update,
			obj: withRV(endpointSlice(func(e *discoveryv1.EndpointSlice) { e.Endpoints = []discoveryv1.Endpoint{{}} })),
			old: endpointSlice(func(e *discoveryv1.EndpointSlice) { e.Endpoints = []discoveryv1.Endpoint{{}} }), gk: discoveryGK},
		// An update that leaves the rules alone gets the handwritten message.
		{name: "unchanged rule without verbs", op: update,
			obj: withRV(&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "default", Labels: map[string]string{"a": "b"}}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}}}}),
			old: &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "default"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}}}}, gk: rbacGK("Role"),
			want: `Role.rbac.authorization.k8s.io "r" is invalid: rules[0].verbs: Required value: verbs must contain at least one value`},
		{name: "node taint duplicate shows the internal taint", obj: &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "n1"},
			Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}, {Key: "k", Effect: corev1.TaintEffectNoSchedule}}},
		}, gk: coreGK("Node"),
			want: `Node "n1" is invalid: metadata.taints[1]: Duplicate value: {"Key":"k","Value":"","Effect":"NoSchedule","TimeAdded":null}: taints must be unique by key and effect pair`},
	})
}

func TestInternalRendering(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"struct with Go names", rbacv1.Subject{Kind: "User", Name: "a"}, `{"Kind":"User","APIGroup":"","Name":"a","Namespace":""}`},
		{"embedded union flattened", corev1.Probe{TimeoutSeconds: 1}, `{"Exec":null,"HTTPGet":null,"TCPSocket":null,"GRPC":null,"InitialDelaySeconds":0,"TimeoutSeconds":1,"PeriodSeconds":0,"SuccessThreshold":0,"FailureThreshold":0,"TerminationGracePeriodSeconds":null}`},
		{"embedded metadata keeps its tags", corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "x"}},
			`{"name":"x","Spec":{"AccessModes":null,"Selector":null,"Resources":{"Limits":null,"Requests":null},"VolumeName":"","StorageClassName":null,"VolumeMode":null,"DataSource":null,"DataSourceRef":null,"VolumeAttributesClassName":null},"Status":{"Phase":"","AccessModes":null,"Capacity":null,"Conditions":null,"AllocatedResources":null,"AllocatedResourceStatuses":null,"CurrentVolumeAttributesClassName":null,"ModifyVolumeStatus":null,"HealthStatus":null}}`},
		{"quantities and maps", corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourceCPU: resource.MustParse("1")}, `{"cpu":"1","memory":"1Gi"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := internal{tc.v}.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
