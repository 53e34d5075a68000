package validation

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var hpaGK = schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}

func cpuMetric(u int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(u)}}}
}

// hpa is an HPA as kube stores it after defaulting.
func hpa(mut ...func(*autoscalingv2.HorizontalPodAutoscaler)) *autoscalingv2.HorizontalPodAutoscaler {
	h := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Generation: 1},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr(int32(1)),
			MaxReplicas:    3,
			Metrics:        []autoscalingv2.MetricSpec{cpuMetric(80)},
		},
	}
	for _, m := range mut {
		m(h)
	}
	return h
}

func q(s string) *resource.Quantity { v := resource.MustParse(s); return &v }

func TestHorizontalPodAutoscaler(t *testing.T) {
	const prefix = `HorizontalPodAutoscaler.autoscaling "web" is invalid: `
	type H = autoscalingv2.HorizontalPodAutoscaler
	check(t, []testCase{
		{name: "valid", obj: hpa(), gk: hpaGK},
		{name: "replication controller without a group", obj: hpa(func(h *H) {
			h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "ReplicationController", Name: "rc"}
		}), gk: hpaGK},
		{name: "bad name", obj: hpa(func(h *H) { h.Name = "Web" }), gk: hpaGK,
			want: `HorizontalPodAutoscaler.autoscaling "Web" is invalid: metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		// maxReplicas' checks are kube's declarative rules: they come last.
		{name: "no maxReplicas, bad ref", obj: hpa(func(h *H) {
			h.Spec.MaxReplicas = 0
			h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{Kind: "Deployment"}
		}), gk: hpaGK,
			want: prefix + "[spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`, " +
				`spec.scaleTargetRef.name: Required value, spec.scaleTargetRef.apiVersion: Invalid value: "": apiVersion must specify API group, ` +
				`spec.maxReplicas: Required value]`},
		{name: "negative replicas", obj: hpa(func(h *H) { h.Spec.MinReplicas, h.Spec.MaxReplicas = ptr(int32(-1)), -2 }), gk: hpaGK,
			want: prefix + "[spec.maxReplicas: Invalid value: -2: must be greater than or equal to `minReplicas`, " +
				`spec.minReplicas: Invalid value: -1: must be greater than or equal to 0, spec.maxReplicas: Invalid value: -2: must be greater than or equal to 1]`},
		{name: "scale to zero needs an object or external metric", obj: hpa(func(h *H) { h.Spec.MinReplicas = ptr(int32(0)) }), gk: hpaGK,
			want: prefix + `spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas`},
		{name: "scale to zero on an external metric", obj: hpa(func(h *H) {
			h.Spec.MinReplicas = ptr(int32(0))
			h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: "queue"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: q("10")}}}}
		}), gk: hpaGK},
		{name: "bad ref", obj: hpa(func(h *H) {
			h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "a/b/c", Kind: "..", Name: "x/y"}
		}), gk: hpaGK,
			want: prefix + `[spec.scaleTargetRef.kind: Invalid value: "..": may not be '..', spec.scaleTargetRef.name: Invalid value: "x/y": may not contain '/', spec.scaleTargetRef.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c]`},
		{name: "metric types", obj: hpa(func(h *H) {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{
				{},
				{Type: "Bogus"},
				{Type: autoscalingv2.PodsMetricSourceType},
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(int32(50))}},
					Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "qps"},
						Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: q("1")}}},
			}
		}), gk: hpaGK,
			want: prefix + `[spec.metrics[0].type: Required value: must specify a metric source type, ` +
				`spec.metrics[0].type: Unsupported value: "": supported values: "ContainerResource", "External", "Object", "Pods", "Resource", ` +
				`spec.metrics[1].type: Unsupported value: "Bogus": supported values: "ContainerResource", "External", "Object", "Pods", "Resource", ` +
				`spec.metrics[2].pods: Required value: must populate information for the given metric source, ` +
				`spec.metrics[3].pods: Forbidden: must populate the given metric source only]`},
		{name: "metric targets", obj: hpa(func(h *H) {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
					Target: autoscalingv2.MetricTarget{Type: "Percent", AverageUtilization: ptr(int32(0)), AverageValue: q("-1")}}},
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: q("0")}}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
					DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "Service", Name: "front"},
					Metric:          autoscalingv2.MetricIdentifier{Name: "hits/s"},
					Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType}}},
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "queue"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: q("1"), AverageValue: q("1")}}},
				{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
					Name: "gpu", Container: "App", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType}}},
			}
		}), gk: hpaGK,
			want: prefix + `[spec.metrics[0].resource.name: Required value: must specify a resource name, ` +
				`spec.metrics[0].resource.target.type: Invalid value: "Percent": must be either Utilization, Value, or AverageValue, ` +
				`spec.metrics[0].resource.target.averageValue: Invalid value: "-1": must be positive, ` +
				`spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0, ` +
				`spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization, ` +
				`spec.metrics[1].pods.metric.name: Required value: must specify a metric name, ` +
				`spec.metrics[1].pods.target.value: Invalid value: "0": must be positive, ` +
				`spec.metrics[1].pods.target.averageValue: Required value: must specify a positive target averageValue, ` +
				`spec.metrics[2].object.metric.name: Invalid value: "hits/s": may not contain '/', ` +
				`spec.metrics[2].object.target.averageValue: Required value: must set either a target value or averageValue, ` +
				`spec.metrics[3].external.target.value: Forbidden: may not set both a target value for metric and a per-pod target, ` +
				`spec.metrics[4].containerResource.name: Invalid value: "gpu": must be a standard resource type or fully qualified, ` +
				`spec.metrics[4].containerResource.name: Invalid value: "gpu": must be a standard resource for containers, ` +
				`spec.metrics[4].containerResource.container: Invalid value: "App": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), ` +
				`spec.metrics[4].containerResource.target.averageUtilization: Required value: must set either a target raw value or a target utilization]`},
		{name: "behavior", obj: hpa(func(h *H) {
			h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr(int32(-1)), SelectPolicy: ptr(autoscalingv2.ScalingPolicySelect("Avg")),
					Policies: []autoscalingv2.HPAScalingPolicy{{Type: "Nodes", Value: 0, PeriodSeconds: 1801}}, Tolerance: q("-0.1")},
				ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr(int32(3601))},
			}
		}), gk: hpaGK,
			want: prefix + `[spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: -1: must be greater than or equal to zero, ` +
				`spec.behavior.scaleUp.selectPolicy: Unsupported value: "Avg": supported values: "Disabled", "Max", "Min", ` +
				`spec.behavior.scaleUp.policies[0].type: Unsupported value: "Nodes": supported values: "Percent", "Pods", ` +
				`spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero, ` +
				`spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800, ` +
				`spec.behavior.scaleUp.tolerance: Invalid value: "-100m": must be greater than or equal to 0, ` +
				`spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: 3601: must be less than or equal to 3600, ` +
				`spec.behavior.scaleDown.policies: Required value: must specify at least one Policy]`},
		{name: "update keeps an invalid apiVersion of the same kind", op: update,
			old: hpa(func(h *H) { h.Spec.ScaleTargetRef.APIVersion = "v1" }),
			obj: withRV(hpa(func(h *H) { h.Spec.ScaleTargetRef.APIVersion = "v1"; h.Spec.MaxReplicas = 5 })), gk: hpaGK},
		{name: "update to an invalid apiVersion", op: update, old: hpa(),
			obj: withRV(hpa(func(h *H) { h.Spec.ScaleTargetRef.APIVersion = "v1" })), gk: hpaGK,
			want: prefix + `spec.scaleTargetRef.apiVersion: Invalid value: "v1": apiVersion must specify API group`},
		{name: "status", op: status, old: hpa(),
			obj: withRV(hpa(func(h *H) {
				h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, DesiredReplicas: 3}
			})), gk: hpaGK},
		{name: "negative status", op: status, old: hpa(),
			obj: withRV(hpa(func(h *H) {
				h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: -1, DesiredReplicas: -2, Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{
					{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, ObservedGeneration: ptr(int64(-3))}}}
			})), gk: hpaGK,
			want: prefix + `[status.conditions[0].observedGeneration: Invalid value: -3: must be greater than or equal to 0, status.currentReplicas: Invalid value: -1: must be greater than or equal to 0, status.desiredReplicas: Invalid value: -2: must be greater than or equal to 0]`},
	})
}
