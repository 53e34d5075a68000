package tables

import (
	"fmt"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() {
	specDoc := autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()
	register("autoscaling", "horizontalpodautoscalers", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Reference", Type: "string", Description: specDoc["scaleTargetRef"]},
		{Name: "Targets", Type: "string", Description: specDoc["metrics"]},
		{Name: "MinPods", Type: "string", Description: specDoc["minReplicas"]},
		{Name: "MaxPods", Type: "string", Description: specDoc["maxReplicas"]},
		{Name: "Replicas", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()["currentReplicas"]},
		ageColumn,
	}, hpaRow))
}

func hpaRow(h *autoscalingv2.HorizontalPodAutoscaler, now time.Time) metav1.TableRow {
	minPods := "<unset>"
	if h.Spec.MinReplicas != nil {
		minPods = fmt.Sprintf("%d", *h.Spec.MinReplicas)
	}
	ref := h.Spec.ScaleTargetRef.Kind + "/" + h.Spec.ScaleTargetRef.Name
	return metav1.TableRow{Cells: []any{h.Name, ref, hpaMetrics(h.Spec.Metrics, h.Status.CurrentMetrics), minPods,
		int64(h.Spec.MaxReplicas), int64(h.Status.CurrentReplicas), age(h.CreationTimestamp, now)}}
}

// hpaMetrics is kube's formatHPAMetrics: "current/target" per metric, the
// first two of them, then "+ N more...".
func hpaMetrics(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	status := func(i int) *autoscalingv2.MetricStatus {
		if i < len(statuses) {
			return &statuses[i]
		}
		return nil
	}
	const unknown = "<unknown>"
	var list []string
	for i, spec := range specs {
		st := status(i)
		switch spec.Type {
		case autoscalingv2.ExternalMetricSourceType:
			current := unknown
			if spec.External.Target.AverageValue != nil {
				if st != nil && st.External != nil && st.External.Current.AverageValue != nil {
					current = st.External.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s/%s (avg)", current, spec.External.Target.AverageValue.String()))
			} else {
				if st != nil && st.External != nil {
					current = st.External.Current.Value.String()
				}
				list = append(list, fmt.Sprintf("%s/%s", current, spec.External.Target.Value.String()))
			}
		case autoscalingv2.PodsMetricSourceType:
			current := unknown
			if st != nil && st.Pods != nil {
				current = st.Pods.Current.AverageValue.String()
			}
			list = append(list, fmt.Sprintf("%s/%s", current, spec.Pods.Target.AverageValue.String()))
		case autoscalingv2.ObjectMetricSourceType:
			current := unknown
			if spec.Object.Target.AverageValue != nil {
				if st != nil && st.Object != nil && st.Object.Current.AverageValue != nil {
					current = st.Object.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s/%s (avg)", current, spec.Object.Target.AverageValue.String()))
			} else {
				if st != nil && st.Object != nil {
					current = st.Object.Current.Value.String()
				}
				list = append(list, fmt.Sprintf("%s/%s", current, spec.Object.Target.Value.String()))
			}
		case autoscalingv2.ResourceMetricSourceType:
			current := unknown
			if spec.Resource.Target.AverageValue != nil {
				if st != nil && st.Resource != nil {
					current = st.Resource.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", spec.Resource.Name, current, spec.Resource.Target.AverageValue.String()))
			} else {
				if st != nil && st.Resource != nil && st.Resource.Current.AverageUtilization != nil {
					current = fmt.Sprintf("%d%%", *st.Resource.Current.AverageUtilization)
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", spec.Resource.Name, current, utilization(spec.Resource.Target.AverageUtilization)))
			}
		case autoscalingv2.ContainerResourceMetricSourceType:
			current := unknown
			if spec.ContainerResource.Target.AverageValue != nil {
				if st != nil && st.ContainerResource != nil {
					current = st.ContainerResource.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", spec.ContainerResource.Name, current, spec.ContainerResource.Target.AverageValue.String()))
			} else {
				if st != nil && st.ContainerResource != nil && st.ContainerResource.Current.AverageUtilization != nil {
					current = fmt.Sprintf("%d%%", *st.ContainerResource.Current.AverageUtilization)
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", spec.ContainerResource.Name, current, utilization(spec.ContainerResource.Target.AverageUtilization)))
			}
		default:
			list = append(list, "<unknown type>")
		}
	}
	if n := len(list); n > 2 {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:2], ", "), n-2)
	}
	return strings.Join(list, ", ")
}

func utilization(u *int32) string {
	if u == nil {
		return "<auto>"
	}
	return fmt.Sprintf("%d%%", *u)
}
