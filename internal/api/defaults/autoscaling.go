package defaults

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// horizontalPodAutoscaler is kube's SetDefaults_HorizontalPodAutoscaler
// for autoscaling/v2: minReplicas 1, a CPU utilization target of 80% when
// there are no metrics, and a behavior, when one is given, completed with
// the scaling rules the controller used before behaviors existed.
func horizontalPodAutoscaler(h *autoscalingv2.HorizontalPodAutoscaler) {
	s := &h.Spec
	if s.MinReplicas == nil {
		s.MinReplicas = ptr.To[int32](1)
	}
	if len(s.Metrics) == 0 {
		s.Metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{
					Type:               autoscalingv2.UtilizationMetricType,
					AverageUtilization: ptr.To[int32](80),
				},
			},
		}}
	}
	if b := s.Behavior; b != nil {
		b.ScaleUp = scalingRules(b.ScaleUp, defaultScaleUp())
		b.ScaleDown = scalingRules(b.ScaleDown, defaultScaleDown())
	}
}

// defaultScaleUp: no stabilization, the larger of 4 pods or 100% per 15 s.
func defaultScaleUp() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: ptr.To[int32](0),
		SelectPolicy:               ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
}

// defaultScaleDown: 100% per 15 s. The stabilization window stays unset:
// the controller's command line decides it.
func defaultScaleDown() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
}

// scalingRules fills the unset fields of from with def's.
func scalingRules(from, def *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if from == nil {
		return def
	}
	if from.SelectPolicy != nil {
		def.SelectPolicy = from.SelectPolicy
	}
	if from.StabilizationWindowSeconds != nil {
		def.StabilizationWindowSeconds = from.StabilizationWindowSeconds
	}
	if from.Policies != nil {
		def.Policies = from.Policies
	}
	if from.Tolerance != nil {
		def.Tolerance = from.Tolerance
	}
	return def
}
