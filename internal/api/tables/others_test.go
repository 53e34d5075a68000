package tables

import (
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestLeaseRows(t *testing.T) {
	runRows(t, schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, []rowCase{
		{name: "held", obj: &coordinationv1.Lease{ObjectMeta: om("kube-system", "kube-scheduler"), Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("cp-1_3f2a")}}, want: []any{"kube-scheduler", "cp-1_3f2a", "10m"}},
		{name: "free", obj: &coordinationv1.Lease{ObjectMeta: om("kube-system", "free")}, want: []any{"free", "", "10m"}},
	})
}

func TestEndpointSliceRows(t *testing.T) {
	ep := func(addrs ...string) discoveryv1.Endpoint { return discoveryv1.Endpoint{Addresses: addrs} }
	runRows(t, schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}, []rowCase{
		{
			name: "ports and endpoints",
			obj: &discoveryv1.EndpointSlice{
				ObjectMeta: om("default", "web-abc12"), AddressType: discoveryv1.AddressTypeIPv4,
				Ports:     []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(80))}, {Name: ptr("metrics")}, {}},
				Endpoints: []discoveryv1.Endpoint{ep("10.244.0.5"), ep("10.244.0.6")},
			},
			want: []any{"web-abc12", "IPv4", "80,metrics,*", "10.244.0.5,10.244.0.6", "10m"},
		},
		{
			name: "more than three",
			obj: &discoveryv1.EndpointSlice{
				ObjectMeta: om("default", "big"), AddressType: discoveryv1.AddressTypeIPv6,
				Ports: []discoveryv1.EndpointPort{
					{Port: ptr(int32(1))}, {Port: ptr(int32(2))}, {Port: ptr(int32(3))}, {Port: ptr(int32(4))}, {Port: ptr(int32(5))},
				},
				Endpoints: []discoveryv1.Endpoint{ep("fd00::1", "fd00::2"), ep("fd00::3", "fd00::4")},
			},
			want: []any{"big", "IPv6", "1,2,3 + 2 more...", "fd00::1,fd00::2,fd00::3 + 1 more...", "10m"},
		},
		{
			name: "empty",
			obj:  &discoveryv1.EndpointSlice{ObjectMeta: om("default", "none"), AddressType: discoveryv1.AddressTypeFQDN},
			want: []any{"none", "FQDN", "<unset>", "<unset>", "10m"},
		},
	})
}

func TestBindingRows(t *testing.T) {
	subjects := []rbacv1.Subject{
		{Kind: rbacv1.UserKind, Name: "jane"},
		{Kind: rbacv1.UserKind, Name: "joe"},
		{Kind: rbacv1.GroupKind, Name: "devs"},
		{Kind: rbacv1.ServiceAccountKind, Namespace: "kube-system", Name: "default"},
		{Kind: "Other", Name: "ignored"},
	}
	runRows(t, schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}, []rowCase{
		{
			name: "role binding",
			obj:  &rbacv1.RoleBinding{ObjectMeta: om("default", "read-pods"), RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "pod-reader"}, Subjects: subjects},
			want: []any{"read-pods", "Role/pod-reader", "10m", "jane, joe", "devs", "kube-system/default"},
		},
	})
	runRows(t, schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}, []rowCase{
		{
			name: "cluster-admin",
			obj: &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "cluster-admin", CreationTimestamp: ago(5 * 24 * time.Hour)},
				RoleRef:    rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "system:masters"}},
			},
			want: []any{"cluster-admin", "ClusterRole/cluster-admin", "5d", "", "system:masters", ""},
		},
	})
}

func TestWebhookConfigurationRows(t *testing.T) {
	runRows(t, schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}, []rowCase{
		{name: "two webhooks", obj: &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: om("", "inject"), Webhooks: make([]admissionregistrationv1.MutatingWebhook, 2)}, want: []any{"inject", int64(2), "10m"}},
	})
	runRows(t, schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}, []rowCase{
		{name: "none", obj: &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: om("", "policy")}, want: []any{"policy", int64(0), "10m"}},
	})
}

func TestValidatingAdmissionPolicyRows(t *testing.T) {
	runRows(t, schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}, []rowCase{
		{name: "no params", obj: &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: om("", "p"),
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{Validations: make([]admissionregistrationv1.Validation, 2)}},
			want: []any{"p", int64(2), "<unset>", "10m"}},
		{name: "params", obj: &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: om("", "p"),
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}}},
			want: []any{"p", int64(0), "v1/ConfigMap", "10m"}},
	})
	binding := func(ref *admissionregistrationv1.ParamRef) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
		return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: om("", "b"),
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ParamRef: ref}}
	}
	runRows(t, schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}, []rowCase{
		{name: "no param", obj: binding(nil), want: []any{"b", "p", "<unset>", "10m"}},
		{name: "namespaced", obj: binding(&admissionregistrationv1.ParamRef{Name: "x", Namespace: "ns"}), want: []any{"b", "p", "ns/x", "10m"}},
		{name: "name only", obj: binding(&admissionregistrationv1.ParamRef{Name: "x"}), want: []any{"b", "p", "*/x", "10m"}},
		{name: "selector", obj: binding(&admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}),
			want: []any{"b", "p", "&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:[]LabelSelectorRequirement{},}", "10m"}},
	})
}

func TestPriorityClassRows(t *testing.T) {
	runRows(t, schema.GroupResource{Group: "scheduling.k8s.io", Resource: "priorityclasses"}, []rowCase{
		{
			name: "system",
			obj: &schedulingv1.PriorityClass{
				ObjectMeta: metav1.ObjectMeta{Name: "system-cluster-critical", CreationTimestamp: ago(5 * 24 * time.Hour)},
				Value:      2000000000, PreemptionPolicy: ptr(corev1.PreemptLowerPriority),
			},
			want: []any{"system-cluster-critical", int64(2000000000), false, "5d", "PreemptLowerPriority"},
		},
		{name: "global default", obj: &schedulingv1.PriorityClass{ObjectMeta: om("", "low"), Value: -5, GlobalDefault: true}, want: []any{"low", int64(-5), true, "10m", ""}},
	})
}

func TestJobRows(t *testing.T) {
	job := func(name string) *batchv1.Job {
		return &batchv1.Job{
			ObjectMeta: om("default", name),
			Spec: batchv1.JobSpec{
				Completions: ptr(int32(1)), Parallelism: ptr(int32(1)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/job-name": name}},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "pi", Image: "perl:5"}}}},
			},
		}
	}
	complete := job("pi")
	complete.Status = batchv1.JobStatus{
		Succeeded: 1, StartTime: agoPtr(10 * time.Minute), CompletionTime: agoPtr(10*time.Minute - 14*time.Second),
		Conditions: []batchv1.JobCondition{{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue}, {Type: batchv1.JobComplete, Status: corev1.ConditionTrue}},
	}
	runningJob := job("work")
	runningJob.Spec.Completions = nil
	runningJob.Spec.Parallelism = ptr(int32(3))
	runningJob.Status = batchv1.JobStatus{StartTime: agoPtr(5 * time.Minute), Active: 3}
	suspended := job("later")
	suspended.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue}}
	failing := job("fail")
	failing.DeletionTimestamp = agoPtr(time.Second)
	failing.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}

	sel := "batch.kubernetes.io/job-name="
	runRows(t, schema.GroupResource{Group: "batch", Resource: "jobs"}, []rowCase{
		{name: "complete", obj: complete, want: []any{"pi", "Complete", "1/1", "14s", "10m", "pi", "perl:5", sel + "pi"}},
		{name: "running parallel", obj: runningJob, want: []any{"work", "Running", "0/1 of 3", "5m", "10m", "pi", "perl:5", sel + "work"}},
		{name: "suspended, not started", obj: suspended, want: []any{"later", "Suspended", "0/1", "", "10m", "pi", "perl:5", sel + "later"}},
		{name: "failed outranks terminating", obj: failing, want: []any{"fail", "Failed", "0/1", "", "10m", "pi", "perl:5", sel + "fail"}},
	})
}

func TestCronJobRows(t *testing.T) {
	cj := &batchv1.CronJob{
		ObjectMeta: om("default", "backup"),
		Spec: batchv1.CronJobSpec{
			Schedule: "0 * * * *", Suspend: ptr(false),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "dump", Image: "pg:16"}}}},
			}},
		},
		Status: batchv1.CronJobStatus{Active: []corev1.ObjectReference{{Name: "backup-1"}}, LastScheduleTime: agoPtr(3 * time.Minute)},
	}
	runRows(t, schema.GroupResource{Group: "batch", Resource: "cronjobs"}, []rowCase{
		{name: "scheduled", obj: cj, want: []any{"backup", "0 * * * *", "<none>", "False", int64(1), "3m", "10m", "dump", "pg:16", "<none>"}},
		{
			name: "never run, with time zone",
			obj:  &batchv1.CronJob{ObjectMeta: om("default", "tz"), Spec: batchv1.CronJobSpec{Schedule: "@daily", TimeZone: ptr("Europe/Paris")}},
			want: []any{"tz", "@daily", "Europe/Paris", "<unset>", int64(0), "<none>", "10m", "", "", "<none>"},
		},
	})
}

func TestIngressRows(t *testing.T) {
	rules := func(hosts ...string) []networkingv1.IngressRule {
		var out []networkingv1.IngressRule
		for _, h := range hosts {
			out = append(out, networkingv1.IngressRule{Host: h})
		}
		return out
	}
	ing := &networkingv1.Ingress{
		ObjectMeta: om("default", "web"),
		Spec: networkingv1.IngressSpec{
			IngressClassName: ptr("nginx"), Rules: rules("a.example.com", "b.example.com"),
			TLS: []networkingv1.IngressTLS{{Hosts: []string{"a.example.com"}}},
		},
		Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{
			Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "203.0.113.9"}, {Hostname: "lb.example.com"}},
		}},
	}
	runRows(t, schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}, []rowCase{
		{name: "tls and address", obj: ing, want: []any{"web", "nginx", "a.example.com,b.example.com", "203.0.113.9,lb.example.com", "80, 443", "10m"}},
		{name: "no hosts", obj: &networkingv1.Ingress{ObjectMeta: om("default", "any"), Spec: networkingv1.IngressSpec{Rules: rules("")}}, want: []any{"any", "<none>", "*", "", "80", "10m"}},
		{name: "more rules than shown", obj: &networkingv1.Ingress{ObjectMeta: om("default", "many"), Spec: networkingv1.IngressSpec{Rules: rules("a", "", "b", "c", "d")}}, want: []any{"many", "<none>", "a,b,c + 2 more...", "", "80", "10m"}},
		{name: "third host last", obj: &networkingv1.Ingress{ObjectMeta: om("default", "three"), Spec: networkingv1.IngressSpec{Rules: rules("a", "", "b", "c")}}, want: []any{"three", "<none>", "a,b,c", "", "80", "10m"}},
	})
}

func TestIngressClassRows(t *testing.T) {
	ic := &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", CreationTimestamp: ago(10 * time.Minute), Annotations: map[string]string{ingressClassDefaultAnnotation: "true"}},
		Spec: networkingv1.IngressClassSpec{
			Controller: "k8s.io/ingress-nginx",
			Parameters: &networkingv1.IngressClassParametersReference{APIGroup: ptr("k8s.example.com"), Kind: "IngressParameters", Name: "external-lb"},
		},
	}
	runRows(t, schema.GroupResource{Group: "networking.k8s.io", Resource: "ingressclasses"}, []rowCase{
		{name: "default with parameters", obj: ic, want: []any{"nginx (default)", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/external-lb", "10m"}},
		{name: "plain", obj: &networkingv1.IngressClass{ObjectMeta: om("", "alb"), Spec: networkingv1.IngressClassSpec{Controller: "ingress.k8s.aws/alb"}}, want: []any{"alb", "ingress.k8s.aws/alb", "<none>", "10m"}},
	})
}

func TestNetworkPolicyAndPDBRows(t *testing.T) {
	runRows(t, schema.GroupResource{Group: "networking.k8s.io", Resource: "networkpolicies"}, []rowCase{
		{name: "selects app", obj: &networkingv1.NetworkPolicy{ObjectMeta: om("default", "web"), Spec: networkingv1.NetworkPolicySpec{PodSelector: *webSelector}}, want: []any{"web", "app=web", "10m"}},
		{name: "all pods", obj: &networkingv1.NetworkPolicy{ObjectMeta: om("default", "deny")}, want: []any{"deny", "<none>", "10m"}},
	})
	runRows(t, schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, []rowCase{
		{
			name: "min available",
			obj:  &policyv1.PodDisruptionBudget{ObjectMeta: om("default", "web"), Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr(intstr.FromInt32(2))}, Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}},
			want: []any{"web", "2", "N/A", int64(1), "10m"},
		},
		{
			name: "max unavailable percent",
			obj:  &policyv1.PodDisruptionBudget{ObjectMeta: om("default", "db"), Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr(intstr.FromString("25%"))}},
			want: []any{"db", "N/A", "25%", int64(0), "10m"},
		},
	})
}
