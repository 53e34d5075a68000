package tables

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func running(name string, restarts int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name: name, Ready: true, Started: ptr(true), RestartCount: restarts,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(5 * time.Minute)}},
	}
}

// pod is a scheduled pod with one container per name.
func pod(name string, containers ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: om("default", name),
		Spec:       corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{
			Phase:  corev1.PodRunning,
			PodIP:  "10.244.0.5",
			PodIPs: []corev1.PodIP{{IP: "10.244.0.5"}, {IP: "fd00::5"}},
		},
	}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c, Image: c + ":latest"})
	}
	return p
}

func TestPodRows(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}

	runningPod := pod("web", "nginx")
	runningPod.Status.ContainerStatuses = []corev1.ContainerStatus{running("nginx", 0)}
	runningPod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}

	crashLoop := pod("crash", "app")
	crashLoop.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "app", RestartCount: 5,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 5m0s"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 1, Reason: "Error", FinishedAt: ago(2 * time.Minute),
		}},
	}}

	terminating := pod("old", "nginx")
	terminating.DeletionTimestamp = agoPtr(time.Second)
	terminating.Status.ContainerStatuses = []corev1.ContainerStatus{running("nginx", 0)}

	nodeLost := pod("lost", "nginx")
	nodeLost.DeletionTimestamp = agoPtr(time.Minute)
	nodeLost.Status.Reason = "NodeLost"
	nodeLost.Status.ContainerStatuses = []corev1.ContainerStatus{running("nginx", 0)}

	pending := &corev1.Pod{
		ObjectMeta: om("default", "pending"),
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}

	gated := pending.DeepCopy()
	gated.Name = "gated"
	gated.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}}

	creating := pod("creating", "app")
	creating.Status.Phase = corev1.PodPending
	creating.Status.PodIP, creating.Status.PodIPs = "", nil
	creating.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}},
	}}

	imagePull := pod("pull", "app", "sidecar")
	imagePull.Status.ContainerStatuses = []corev1.ContainerStatus{
		{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}},
		running("sidecar", 0),
	}

	initRunning := pod("init", "app")
	initRunning.Status.Phase = corev1.PodPending
	initRunning.Spec.InitContainers = []corev1.Container{{Name: "migrate"}, {Name: "warm"}}
	initRunning.Status.InitContainerStatuses = []corev1.ContainerStatus{
		{Name: "migrate", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}},
		{Name: "warm", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
	}
	initRunning.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}},
	}}

	initCrash := pod("init-crash", "app")
	initCrash.Status.Phase = corev1.PodPending
	initCrash.Spec.InitContainers = []corev1.Container{{Name: "migrate"}}
	initCrash.Status.InitContainerStatuses = []corev1.ContainerStatus{{
		Name: "migrate", RestartCount: 3,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 1, Reason: "Error", FinishedAt: ago(30 * time.Second),
		}},
	}}

	initError := pod("init-error", "app")
	initError.Status.Phase = corev1.PodPending
	initError.Spec.InitContainers = []corev1.Container{{Name: "migrate"}}
	initError.Status.InitContainerStatuses = []corev1.ContainerStatus{{
		Name: "migrate", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}},
	}}

	sidecar := pod("with-sidecar", "app")
	sidecar.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: ptr(corev1.ContainerRestartPolicyAlways)}}
	sidecar.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}}
	sidecar.Status.InitContainerStatuses = []corev1.ContainerStatus{func() corev1.ContainerStatus {
		s := running("proxy", 1)
		s.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 137, FinishedAt: ago(3 * time.Hour)}
		return s
	}()}
	sidecar.Status.ContainerStatuses = []corev1.ContainerStatus{running("app", 0)}

	completed := pod("job-abc", "work")
	completed.Status.Phase = corev1.PodSucceeded
	completed.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "work", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}},
	}}

	// A finished pod being deleted keeps its final status.
	completedDeleting := completed.DeepCopy()
	completedDeleting.Name = "job-def"
	completedDeleting.DeletionTimestamp = agoPtr(time.Second)

	oomKilled := pod("oom", "app")
	oomKilled.Status.Phase = corev1.PodFailed
	oomKilled.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}},
	}}

	signal := pod("signal", "app")
	signal.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 143, Signal: 15}},
	}}

	// One container finished, one still running and the pod Ready.
	oneDone := pod("one-done", "done", "serve")
	oneDone.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	oneDone.Status.ContainerStatuses = []corev1.ContainerStatus{
		{Name: "done", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}},
		running("serve", 0),
	}
	notReady := oneDone.DeepCopy()
	notReady.Name = "not-ready"
	notReady.Status.Conditions = nil

	evicted := pod("evicted", "app")
	evicted.Status.Phase = corev1.PodFailed
	evicted.Status.Reason = "Evicted"
	evicted.Status.PodIP, evicted.Status.PodIPs = "", nil

	gates := pod("gated-ready", "app")
	gates.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/lb"}, {ConditionType: "example.com/dns"}}
	gates.Status.Conditions = []corev1.PodCondition{
		{Type: "example.com/lb", Status: corev1.ConditionTrue},
		{Type: "example.com/dns", Status: corev1.ConditionFalse},
	}
	gates.Status.NominatedNodeName = "node-2"
	gates.Status.PodIPs = nil // an old object with only podIP

	runRows(t, gr, []rowCase{
		{name: "running 1/1", obj: runningPod, want: []any{"web", "1/1", "Running", "0", "10m", "10.244.0.5", "node-1", "<none>", "<none>"}},
		{name: "CrashLoopBackOff with last restart", obj: crashLoop, want: []any{"crash", "0/1", "CrashLoopBackOff", "5 (2m ago)", "10m", "10.244.0.5", "node-1", "<none>", "<none>"}},
		{name: "terminating", obj: terminating, want: []any{"old", "1/1", "Terminating", "0", "10m", "10.244.0.5", "node-1", "<none>", "<none>"}},
		{name: "node lost", obj: nodeLost, want: []any{"lost", "1/1", "Unknown", "0", "10m", "10.244.0.5", "node-1", "<none>", "<none>"}},
		{name: "pending unscheduled", obj: pending, want: []any{"pending", "0/1", "Pending", "0", "10m", "<none>", "<none>", "<none>", "<none>"}},
		{name: "scheduling gated", obj: gated, want: []any{"gated", "0/1", "SchedulingGated", "0", "10m", "<none>", "<none>", "<none>", "<none>"}},
		{name: "container creating", obj: creating, want: []any{"creating", "0/1", "ContainerCreating", "0", "10m", "<none>", "node-1", "<none>", "<none>"}},
		{name: "first container's waiting reason wins", obj: imagePull, want: []any{"pull", "1/2", "ImagePullBackOff", "0", "10m", "10.244.0.5", "node-1", "<none>", "<none>"}},
		{name: "init running", obj: initRunning, want: []any{"init", "0/1", "Init:1/2", "0", "10m", "10.244.0.5", "node-1", "<none>", "<none>"}},
		{name: "init CrashLoopBackOff", obj: initCrash, want: []any{"init-crash", "0/1", "Init:CrashLoopBackOff", "3 (30s ago)", "10m", "10.244.0.5", "node-1", "<none>", "<none>"}},
		{name: "init exit code", obj: initError, want: []any{"init-error", "0/1", "Init:ExitCode:2", "0", "10m", "10.244.0.5", "node-1", "<none>", "<none>"}},
		{name: "sidecar counts in ready and restarts", obj: sidecar, want: []any{"with-sidecar", "2/2", "Running", "1 (3h ago)", "10m", "10.244.0.5", "node-1", "<none>", "<none>"}},
		{name: "completed", obj: completed, want: []any{"job-abc", "0/1", "Completed", "0", "10m", "10.244.0.5", "node-1", "<none>", "<none>"}, conditions: podSucceededConditions},
		{name: "completed and deleted", obj: completedDeleting, want: []any{"job-def", "0/1", "Completed", "0", "10m", "10.244.0.5", "node-1", "<none>", "<none>"}, conditions: podSucceededConditions},
		{name: "OOMKilled", obj: oomKilled, want: []any{"oom", "0/1", "OOMKilled", "0", "10m", "10.244.0.5", "node-1", "<none>", "<none>"}, conditions: podFailedConditions},
		{name: "killed by signal", obj: signal, want: []any{"signal", "0/1", "Signal:15", "0", "10m", "10.244.0.5", "node-1", "<none>", "<none>"}},
		{name: "one container done, pod ready", obj: oneDone, want: []any{"one-done", "1/2", "Running", "0", "10m", "10.244.0.5", "node-1", "<none>", "<none>"}},
		{name: "one container done, pod not ready", obj: notReady, want: []any{"not-ready", "1/2", "NotReady", "0", "10m", "10.244.0.5", "node-1", "<none>", "<none>"}},
		{name: "evicted", obj: evicted, want: []any{"evicted", "0/1", "Evicted", "0", "10m", "<none>", "node-1", "<none>", "<none>"}, conditions: podFailedConditions},
		{name: "readiness gates and nominated node", obj: gates, want: []any{"gated-ready", "0/1", "Running", "0", "10m", "10.244.0.5", "node-1", "node-2", "1/2"}},
	})
}

func TestPodColumns(t *testing.T) {
	want := []struct {
		name     string
		priority int32
	}{
		{"Name", 0}, {"Ready", 0}, {"Status", 0}, {"Restarts", 0}, {"Age", 0},
		{"IP", 1}, {"Node", 1}, {"Nominated Node", 1}, {"Readiness Gates", 1},
	}
	cols := Columns(schema.GroupResource{Resource: "pods"})
	if len(cols) != len(want) {
		t.Fatalf("got %d columns, want %d", len(cols), len(want))
	}
	for i, w := range want {
		if cols[i].Name != w.name || cols[i].Priority != w.priority || cols[i].Type != "string" {
			t.Errorf("column %d = %+v, want %s priority %d", i, cols[i], w.name, w.priority)
		}
	}
	if cols[0].Format != "name" || cols[0].Description != (metav1.ObjectMeta{}).SwaggerDoc()["name"] {
		t.Errorf("NAME column = %+v", cols[0])
	}
	if cols[5].Description != (corev1.PodStatus{}).SwaggerDoc()["podIP"] {
		t.Errorf("IP description = %q", cols[5].Description)
	}
}
