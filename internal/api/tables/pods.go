package tables

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nodeLostReason is what the node lifecycle controller sets on pods of an
// unreachable node; kube prints such a terminating pod as "Unknown".
const nodeLostReason = "NodeLost"

var (
	podSucceededConditions = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
	podFailedConditions    = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodFailed), Message: "The pod failed."}}
)

func init() {
	register("", "pods", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic."},
		{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod."},
		{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
		ageColumn,
		{Name: "IP", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["podIP"]},
		{Name: "Node", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["nodeName"]},
		{Name: "Nominated Node", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]},
		{Name: "Readiness Gates", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["readinessGates"]},
	}, podRow))
}

// isSidecar reports whether an init container keeps running beside the
// app containers (restartPolicy Always); kube counts those in READY.
func isSidecar(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// laterTermination returns the later of t and the finish time of the
// container's last termination, for the "(5m ago)" of RESTARTS.
func laterTermination(t time.Time, s corev1.ContainerStatus) time.Time {
	if term := s.LastTerminationState.Terminated; term != nil && t.Before(term.FinishedAt.Time) {
		return term.FinishedAt.Time
	}
	return t
}

func podConditionTrue(pod *corev1.Pod, t corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podRow follows kube's printPod: STATUS is the most telling reason among
// the pod, its init containers and its containers, in that order of
// override.
func podRow(pod *corev1.Pod, now time.Time) metav1.TableRow {
	var row metav1.TableRow
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		row.Conditions = podSucceededConditions
	case corev1.PodFailed:
		row.Conditions = podFailedConditions
	}

	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}

	total := len(pod.Spec.Containers)
	sidecars := map[string]bool{}
	for i := range pod.Spec.InitContainers {
		if isSidecar(&pod.Spec.InitContainers[i]) {
			sidecars[pod.Spec.InitContainers[i].Name] = true
			total++
		}
	}

	ready, restarts, sidecarRestarts := 0, 0, 0
	var lastRestart, lastSidecarRestart time.Time
	initializing := false
initLoop:
	for i, s := range pod.Status.InitContainerStatuses {
		restarts += int(s.RestartCount)
		lastRestart = laterTermination(lastRestart, s)
		if sidecars[s.Name] {
			sidecarRestarts += int(s.RestartCount)
			lastSidecarRestart = laterTermination(lastSidecarRestart, s)
		}
		switch {
		case s.State.Terminated != nil && s.State.Terminated.ExitCode == 0:
			continue
		case sidecars[s.Name] && s.Started != nil && *s.Started:
			if s.Ready {
				ready++
			}
			continue
		case s.State.Terminated != nil:
			switch t := s.State.Terminated; {
			case t.Reason != "":
				reason = "Init:" + t.Reason
			case t.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
		case s.State.Waiting != nil && s.State.Waiting.Reason != "" && s.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + s.State.Waiting.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		// The first init container still in the way names the status.
		initializing = true
		break initLoop
	}

	if !initializing || podConditionTrue(pod, corev1.PodInitialized) {
		// Once initialized, only sidecar restarts still count among the
		// init containers'.
		restarts, lastRestart = sidecarRestarts, lastSidecarRestart
		hasRunning := false
		errorReason := ""
		// Backwards, so the first container's state wins.
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			s := pod.Status.ContainerStatuses[i]
			restarts += int(s.RestartCount)
			lastRestart = laterTermination(lastRestart, s)
			switch {
			case s.State.Waiting != nil && s.State.Waiting.Reason != "":
				reason = s.State.Waiting.Reason
			case s.State.Terminated != nil:
				switch t := s.State.Terminated; {
				case t.Reason != "":
					reason = t.Reason
				case t.Signal != 0:
					reason = fmt.Sprintf("Signal:%d", t.Signal)
				default:
					reason = fmt.Sprintf("ExitCode:%d", t.ExitCode)
				}
				if s.State.Terminated.ExitCode != 0 {
					errorReason = reason
				}
			case s.Ready && s.State.Running != nil:
				hasRunning = true
				ready++
			}
		}
		// A pod with one container done and another still up is not
		// "Completed".
		if reason == "Completed" {
			switch {
			case hasRunning && podConditionTrue(pod, corev1.PodReady):
				reason = "Running"
			case errorReason != "":
				reason = errorReason
			case hasRunning:
				reason = "NotReady"
			}
		}
	}

	if pod.DeletionTimestamp != nil {
		switch {
		case pod.Status.Reason == nodeLostReason:
			reason = "Unknown"
		case pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed:
			reason = "Terminating"
		}
	}

	restartsCell := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartsCell = fmt.Sprintf("%d (%s ago)", restarts, age(metav1.NewTime(lastRestart), now))
	}

	ip := pod.Status.PodIP
	if len(pod.Status.PodIPs) > 0 {
		ip = pod.Status.PodIPs[0].IP
	}
	readinessGates := "<none>"
	if len(pod.Spec.ReadinessGates) > 0 {
		trueGates := 0
		for _, g := range pod.Spec.ReadinessGates {
			if podConditionTrue(pod, g.ConditionType) {
				trueGates++
			}
		}
		readinessGates = fmt.Sprintf("%d/%d", trueGates, len(pod.Spec.ReadinessGates))
	}

	row.Cells = []any{
		pod.Name,
		fmt.Sprintf("%d/%d", ready, total),
		reason,
		restartsCell,
		age(pod.CreationTimestamp, now),
		orNone(ip),
		orNone(pod.Spec.NodeName),
		orNone(pod.Status.NominatedNodeName),
		readinessGates,
	}
	return row
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
