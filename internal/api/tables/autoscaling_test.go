package tables

import (
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var hpaGR = schema.GroupResource{Group: "autoscaling", Resource: "horizontalpodautoscalers"}

func TestHPAColumns(t *testing.T) {
	var got []string
	for _, c := range Columns(hpaGR) {
		got = append(got, strings.ToUpper(c.Name))
	}
	if want := "NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE"; strings.Join(got, " ") != want {
		t.Errorf("headers\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

func cpu(u int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(u)}}}
}

func hpa(min *int32, max int32, metrics ...autoscalingv2.MetricSpec) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: om("default", "web"), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
		MinReplicas:    min, MaxReplicas: max, Metrics: metrics}}
}

func TestHPARows(t *testing.T) {
	q := resource.MustParse
	withStatus := hpa(ptr(int32(1)), 3, cpu(80))
	withStatus.Status = autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, CurrentMetrics: []autoscalingv2.MetricStatus{{
		Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr(int32(45))}}}}}
	avg := q("100m")
	val := q("2k")
	pods := autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &avg}}}
	object := autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "hits"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: &val}}}
	external := autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "queue"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &avg}}}
	container := autoscalingv2.MetricSpec{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
		Name: corev1.ResourceMemory, Container: "app", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType}}}
	runRows(t, hpaGR, []rowCase{
		{name: "defaulted, no status", obj: hpa(ptr(int32(1)), 3, cpu(80)),
			want: []any{"web", "Deployment/web", "cpu: <unknown>/80%", "1", int64(3), int64(0), "10m"}},
		{name: "current utilization", obj: withStatus,
			want: []any{"web", "Deployment/web", "cpu: 45%/80%", "1", int64(3), int64(2), "10m"}},
		{name: "no metrics, no minReplicas", obj: hpa(nil, 5),
			want: []any{"web", "Deployment/web", "<none>", "<unset>", int64(5), int64(0), "10m"}},
		{name: "pods and object", obj: hpa(ptr(int32(2)), 4, pods, object),
			want: []any{"web", "Deployment/web", "<unknown>/100m, <unknown>/2k", "2", int64(4), int64(0), "10m"}},
		{name: "more than two", obj: hpa(ptr(int32(0)), 4, external, container, cpu(50), pods),
			want: []any{"web", "Deployment/web", "<unknown>/100m (avg), memory: <unknown>/<auto> + 2 more...", "0", int64(4), int64(0), "10m"}},
	})
}
