package accesse2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// admissionServer starts a server whose admission lists are the given
// ones (nil keeps the defaults).
func admissionServer(t *testing.T, mutating, validating []string) (*testserver.TestServer, kubernetes.Interface) {
	t.Helper()
	list := func(names []string) map[string]any {
		l := []any{}
		for _, n := range names {
			l = append(l, map[string]any{"name": n})
		}
		return map[string]any{"plugins": l}
	}
	ts := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		for i, e := range c.Pipeline {
			if e.Name == "mutating-admission" && mutating != nil {
				c.Pipeline[i].Config = list(mutating)
			}
			if e.Name == "validating-admission" && validating != nil {
				c.Pipeline[i].Config = list(validating)
			}
		}
	}})
	return ts, kubernetes.NewForConfigOrDie(ts.Config)
}

// TestBuiltinAdmission runs the default-on plugins' cases on one server;
// Priority goes last, as its default class changes every later pod.
func TestBuiltinAdmission(t *testing.T) {
	ts, cs := e2eutil.APIServer(t)
	for _, c := range []struct {
		name string
		fn   func(*testing.T, *testserver.TestServer, kubernetes.Interface)
	}{
		{"DefaultPluginsShapePods", defaultAdmissionShapesPods},
		{"LimitRanger", limitRangerAdmission},
		{"ResourceQuota", resourceQuotaAdmission},
		{"ResourceQuotaHoldsUnderConcurrentCreates", resourceQuotaHoldsUnderConcurrentCreates},
		{"Metrics", admissionMetrics},
		{"Priority", priorityAdmission},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, ts, cs) })
	}
}

func wantForbidden(t *testing.T, err error, msg string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Fatalf("want 403 Forbidden %q, got %v", msg, err)
	}
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("message %q lacks %q", err.Error(), msg)
	}
}

// The default plugins, as kube-apiserver runs them, shape a plain pod.
func defaultAdmissionShapesPods(t *testing.T, _ *testserver.TestServer, cs kubernetes.Interface) {
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "adm")
	e2eutil.WaitDefaultSA(t, cs, "adm")

	pod, err := cs.CoreV1().Pods("adm").Create(ctx, e2eutil.Pod("plain"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// ServiceAccount: default account and the projected token volume.
	if pod.Spec.ServiceAccountName != "default" || pod.Spec.DeprecatedServiceAccount != "default" { //nolint:staticcheck // kube sets it
		t.Errorf("serviceAccountName %q", pod.Spec.ServiceAccountName)
	}
	if len(pod.Spec.Volumes) != 1 || !strings.HasPrefix(pod.Spec.Volumes[0].Name, "kube-api-access-") || pod.Spec.Volumes[0].Projected == nil {
		t.Fatalf("volumes %+v", pod.Spec.Volumes)
	}
	proj := pod.Spec.Volumes[0].Projected
	if *proj.DefaultMode != 420 || len(proj.Sources) != 3 || proj.Sources[0].ServiceAccountToken.Path != "token" ||
		*proj.Sources[0].ServiceAccountToken.ExpirationSeconds != 3607 || proj.Sources[1].ConfigMap.Name != "kube-root-ca.crt" ||
		proj.Sources[2].DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.namespace" {
		t.Errorf("projected volume %+v", proj)
	}
	m := pod.Spec.Containers[0].VolumeMounts
	if len(m) != 1 || m[0].Name != pod.Spec.Volumes[0].Name || !m[0].ReadOnly || m[0].MountPath != "/var/run/secrets/kubernetes.io/serviceaccount" {
		t.Errorf("mounts %+v", m)
	}
	// DefaultTolerationSeconds.
	tol := pod.Spec.Tolerations
	if len(tol) != 2 || tol[0].Key != "node.kubernetes.io/not-ready" || *tol[0].TolerationSeconds != 300 ||
		tol[1].Key != "node.kubernetes.io/unreachable" || tol[1].Effect != corev1.TaintEffectNoExecute {
		t.Errorf("tolerations %+v", tol)
	}
	// Priority: no default class, so 0 and PreemptLowerPriority.
	if pod.Spec.Priority == nil || *pod.Spec.Priority != 0 || *pod.Spec.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Errorf("priority %v %v", pod.Spec.Priority, pod.Spec.PreemptionPolicy)
	}

	// automountServiceAccountToken: false keeps the volume out.
	pod, err = cs.CoreV1().Pods("adm").Create(ctx, e2eutil.Pod("nomount", func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = ptr.To(false) }), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Volumes) != 0 || len(pod.Spec.Containers[0].VolumeMounts) != 0 {
		t.Errorf("automount false still mounted: %+v", pod.Spec.Volumes)
	}
	// ... as does the account's own setting.
	if _, err := cs.CoreV1().ServiceAccounts("adm").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "quiet"}, AutomountServiceAccountToken: ptr.To(false)}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err = cs.CoreV1().Pods("adm").Create(ctx, e2eutil.Pod("quiet", func(p *corev1.Pod) { p.Spec.ServiceAccountName = "quiet" }), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Volumes) != 0 {
		t.Errorf("account automount false still mounted: %+v", pod.Spec.Volumes)
	}

	// A missing account is refused with kube's message.
	_, err = cs.CoreV1().Pods("adm").Create(ctx, e2eutil.Pod("ghost", func(p *corev1.Pod) { p.Spec.ServiceAccountName = "ghost" }), metav1.CreateOptions{})
	wantForbidden(t, err, `pods "ghost" is forbidden: error looking up service account adm/ghost: serviceaccount "ghost" not found`)

	// The controller puts the default account back.
	if err := cs.CoreV1().ServiceAccounts("adm").Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.WaitDefaultSA(t, cs, "adm")
}

func priorityAdmission(t *testing.T, _ *testserver.TestServer, cs kubernetes.Interface) {
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "prio")
	e2eutil.WaitDefaultSA(t, cs, "prio")
	pcs := cs.SchedulingV1().PriorityClasses()

	// The bootstrap hook made kube's system classes.
	e2eutil.Eventually(t, 10*time.Second, "system priority classes", func() bool {
		pc, err := pcs.Get(ctx, "system-node-critical", metav1.GetOptions{})
		return err == nil && pc.Value == 2000001000
	})
	if pc, err := pcs.Get(ctx, "system-cluster-critical", metav1.GetOptions{}); err != nil || pc.Value != 2000000000 {
		t.Fatalf("system-cluster-critical: %v %v", pc, err)
	}
	err := pcs.Delete(ctx, "system-cluster-critical", metav1.DeleteOptions{})
	wantForbidden(t, err, "this is a system priority class and cannot be deleted")

	never := corev1.PreemptNever
	if _, err := pcs.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "batch"}, Value: 1000, GlobalDefault: true, PreemptionPolicy: &never}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = pcs.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "second"}, Value: 5, GlobalDefault: true}, metav1.CreateOptions{})
	wantForbidden(t, err, "PriorityClass batch is already marked as default. Only one default can exist")

	// A pod's default comes from the watch cache, as from kube's lister:
	// it is in effect once the cache has the new class.
	e2eutil.Eventually(t, 10*time.Second, "the new default in effect", func() bool {
		p, err := cs.CoreV1().Pods("prio").Create(ctx, e2eutil.Pod("dflt"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil && p.Spec.PriorityClassName == "batch"
	})
	pod, err := cs.CoreV1().Pods("prio").Create(ctx, e2eutil.Pod("dflt"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.PriorityClassName != "batch" || *pod.Spec.Priority != 1000 || *pod.Spec.PreemptionPolicy != corev1.PreemptNever {
		t.Errorf("default class: %q %v %v", pod.Spec.PriorityClassName, *pod.Spec.Priority, *pod.Spec.PreemptionPolicy)
	}
	pod, err = cs.CoreV1().Pods("prio").Create(ctx, e2eutil.Pod("crit", func(p *corev1.Pod) { p.Spec.PriorityClassName = "system-node-critical" }), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *pod.Spec.Priority != 2000001000 {
		t.Errorf("system-node-critical priority %d", *pod.Spec.Priority)
	}
	_, err = cs.CoreV1().Pods("prio").Create(ctx, e2eutil.Pod("nope", func(p *corev1.Pod) { p.Spec.PriorityClassName = "nope" }), metav1.CreateOptions{})
	wantForbidden(t, err, `pods "nope" is forbidden: no PriorityClass with name nope was found`)
	_, err = cs.CoreV1().Pods("prio").Create(ctx, e2eutil.Pod("fixed", func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](7) }), metav1.CreateOptions{})
	wantForbidden(t, err, "the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name")
}

func limitRangerAdmission(t *testing.T, _ *testserver.TestServer, cs kubernetes.Interface) {
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "lr")
	e2eutil.WaitDefaultSA(t, cs, "lr")
	q := resource.MustParse
	if _, err := cs.CoreV1().LimitRanges("lr").Create(ctx, &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "limits"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypeContainer,
				Default:              corev1.ResourceList{corev1.ResourceCPU: q("500m"), corev1.ResourceMemory: q("256Mi")},
				DefaultRequest:       corev1.ResourceList{corev1.ResourceCPU: q("250m"), corev1.ResourceMemory: q("128Mi")},
				Max:                  corev1.ResourceList{corev1.ResourceCPU: q("1")},
				Min:                  corev1.ResourceList{corev1.ResourceCPU: q("100m")},
				MaxLimitRequestRatio: corev1.ResourceList{corev1.ResourceCPU: q("4")}},
			{Type: corev1.LimitTypePersistentVolumeClaim, Max: corev1.ResourceList{corev1.ResourceStorage: q("1Gi")}},
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := cs.CoreV1().Pods("lr").Create(ctx, e2eutil.Pod("dflt"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := pod.Spec.Containers[0].Resources
	if r.Requests.Cpu().String() != "250m" || r.Limits.Cpu().String() != "500m" || r.Requests.Memory().String() != "128Mi" || r.Limits.Memory().String() != "256Mi" {
		t.Errorf("defaults %+v", r)
	}
	if got := pod.Annotations["kubernetes.io/limit-ranger"]; got != "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app" {
		t.Errorf("annotation %q", got)
	}
	if pod.Status.QOSClass != corev1.PodQOSBurstable {
		t.Errorf("QoS %q", pod.Status.QOSClass)
	}
	withCPU := func(req, lim string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: q(req)}, Limits: corev1.ResourceList{corev1.ResourceCPU: q(lim)}}
		}
	}
	_, err = cs.CoreV1().Pods("lr").Create(ctx, e2eutil.Pod("big", withCPU("500m", "2")), metav1.CreateOptions{})
	wantForbidden(t, err, `pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2`)
	_, err = cs.CoreV1().Pods("lr").Create(ctx, e2eutil.Pod("small", withCPU("50m", "100m")), metav1.CreateOptions{})
	wantForbidden(t, err, `pods "small" is forbidden: minimum cpu usage per Container is 100m, but request is 50m`)
	// Several violations read as kube's aggregate: [a, b].
	_, err = cs.CoreV1().Pods("lr").Create(ctx, e2eutil.Pod("both", withCPU("50m", "2")), metav1.CreateOptions{})
	wantForbidden(t, err, `pods "both" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, maximum cpu usage per Container is 1, but limit is 2, cpu max limit to request ratio per Container is 4, but provided ratio is 40.000000]`)
	_, err = cs.CoreV1().Pods("lr").Create(ctx, e2eutil.Pod("ratio", withCPU("100m", "1")), metav1.CreateOptions{})
	wantForbidden(t, err, "cpu max limit to request ratio per Container is 4, but provided ratio is 10.000000")
	_, err = cs.CoreV1().PersistentVolumeClaims("lr").Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "huge"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q("5Gi")}}},
	}, metav1.CreateOptions{})
	wantForbidden(t, err, `persistentvolumeclaims "huge" is forbidden: maximum storage usage per PersistentVolumeClaim is 1Gi, but request is 5Gi`)
}

func TestOptionalPodPlugins(t *testing.T) {
	_, cs := admissionServer(t,
		[]string{"NamespaceAutoProvision", "ServiceAccount", "AlwaysPullImages"},
		[]string{"NamespaceExists", "ServiceAccount", "AlwaysPullImages"})
	ctx := context.Background()

	// NamespaceAutoProvision: a create in a missing namespace makes it.
	// The default account is asked for again for a while, as kube does,
	// so the new namespace's account arrives in time.
	pod, err := cs.CoreV1().Pods("auto").Create(ctx, e2eutil.Pod("p", func(p *corev1.Pod) {
		p.Spec.Containers[0].ImagePullPolicy = corev1.PullIfNotPresent
	}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns, err := cs.CoreV1().Namespaces().Get(ctx, "auto", metav1.GetOptions{}); err != nil || ns.Status.Phase != corev1.NamespaceActive {
		t.Fatalf("auto-provisioned namespace: %v %v", ns, err)
	}
	// AlwaysPullImages.
	if pod.Spec.Containers[0].ImagePullPolicy != corev1.PullAlways {
		t.Errorf("imagePullPolicy %q", pod.Spec.Containers[0].ImagePullPolicy)
	}
	// A dry run has no side effects: no namespace is made.
	_, err = cs.CoreV1().ConfigMaps("dry").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{DryRun: []string{"All"}})
	// ... and NamespaceExists refuses it with the namespace's NotFound.
	if !apierrors.IsNotFound(err) || err.Error() != `namespaces "dry" not found` {
		t.Errorf("dry run in a missing namespace: %v", err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a dry run provisioned its namespace: %v", err)
	}
}

func resourceQuotaAdmission(t *testing.T, _ *testserver.TestServer, cs kubernetes.Interface) {
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "rq")
	e2eutil.WaitDefaultSA(t, cs, "rq")
	q := resource.MustParse
	quotas := cs.CoreV1().ResourceQuotas("rq")
	if _, err := quotas.Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "compute"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			corev1.ResourcePods: q("2"), corev1.ResourceRequestsCPU: q("1"), corev1.ResourceLimitsMemory: q("1Gi"),
			corev1.ResourceConfigMaps: q("1"), corev1.ResourceSecrets: q("3"), corev1.ResourceServices: q("1"),
			"count/leases.coordination.k8s.io": q("0"),
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The controller fills status before anything is charged.
	e2eutil.Eventually(t, 10*time.Second, "the quota's status", func() bool {
		rq, err := quotas.Get(ctx, "compute", metav1.GetOptions{})
		return err == nil && len(rq.Status.Hard) == 7 && len(rq.Status.Used) == 7
	})
	withRes := func(cpu, mem string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: q(cpu)}, Limits: corev1.ResourceList{corev1.ResourceMemory: q(mem)}}
		}
	}
	_, err := cs.CoreV1().Pods("rq").Create(ctx, e2eutil.Pod("bare"), metav1.CreateOptions{})
	wantForbidden(t, err, `pods "bare" is forbidden: failed quota: compute: must specify limits.memory for: app; requests.cpu for: app`)
	if _, err := cs.CoreV1().Pods("rq").Create(ctx, e2eutil.Pod("a", withRes("600m", "512Mi")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Pods("rq").Create(ctx, e2eutil.Pod("b", withRes("600m", "256Mi")), metav1.CreateOptions{})
	wantForbidden(t, err, `pods "b" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1`)
	rq, err := quotas.Get(ctx, "compute", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rq.Status.Used.Pods().Value() != 1 || rq.Status.Used.Name(corev1.ResourceRequestsCPU, resource.DecimalSI).String() != "600m" {
		t.Errorf("used after one pod: %v", rq.Status.Used)
	}
	_, err = cs.CoordinationV1().Leases("rq").Create(ctx, leaseNamed("l"), metav1.CreateOptions{})
	wantForbidden(t, err, "exceeded quota: compute, requested: count/leases.coordination.k8s.io=1, used: count/leases.coordination.k8s.io=0, limited: count/leases.coordination.k8s.io=0")
	// A dry run is checked, never charged.
	if _, err := cs.CoreV1().ConfigMaps("rq").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}}, metav1.CreateOptions{DryRun: []string{"All"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("rq").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "one"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().ConfigMaps("rq").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "two"}}, metav1.CreateOptions{})
	wantForbidden(t, err, `configmaps "two" is forbidden: exceeded quota: compute, requested: configmaps=1, used: configmaps=1, limited: configmaps=1`)

	// A delete releases: the controller recalculates.
	if err := cs.CoreV1().Pods("rq").Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.Eventually(t, 10*time.Second, "the deleted pod's usage released", func() bool {
		rq, err := quotas.Get(ctx, "compute", metav1.GetOptions{})
		return err == nil && rq.Status.Used.Pods().Value() == 0 && rq.Status.Used.Name(corev1.ResourceRequestsCPU, resource.DecimalSI).IsZero()
	})
	if _, err := cs.CoreV1().Pods("rq").Create(ctx, e2eutil.Pod("b", withRes("600m", "256Mi")), metav1.CreateOptions{}); err != nil {
		t.Fatalf("after the release: %v", err)
	}
}

// Twenty creators race for a quota of five: exactly five objects are
// created, status.used says five, and every other create is refused.
func resourceQuotaHoldsUnderConcurrentCreates(t *testing.T, _ *testserver.TestServer, cs kubernetes.Interface) {
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "race")
	const limit, creators = 5, 20
	quotas := cs.CoreV1().ResourceQuotas("race")
	if _, err := quotas.Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "count"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/configmaps": *resource.NewQuantity(limit, resource.DecimalSI)}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.Eventually(t, 10*time.Second, "the quota's status", func() bool {
		rq, err := quotas.Get(ctx, "count", metav1.GetOptions{})
		return err == nil && len(rq.Status.Used) == 1
	})
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, refused := 0, 0
	var other []error
	start := make(chan struct{})
	for i := 0; i < creators; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := cs.CoreV1().ConfigMaps("race").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i)}}, metav1.CreateOptions{})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				created++
			case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota: count"):
				refused++
			default:
				other = append(other, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(other) > 0 {
		t.Fatalf("unexpected errors: %v", other)
	}
	if created != limit || refused != creators-limit {
		t.Fatalf("created %d, refused %d; want %d and %d", created, refused, limit, creators-limit)
	}
	list, err := cs.CoreV1().ConfigMaps("race").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored := 0
	for _, cm := range list.Items {
		if strings.HasPrefix(cm.Name, "cm-") {
			stored++
		}
	}
	rq, err := quotas.Get(ctx, "count", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	used := rq.Status.Used["count/configmaps"]
	// kube-root-ca.crt is not published here, so the namespace holds only
	// the test's configmaps.
	if stored != limit || used.Value() != int64(len(list.Items)) || used.Value() != limit {
		t.Errorf("stored %d (of %d), status.used %s; want %d", stored, len(list.Items), used.String(), limit)
	}
}

// Every plugin that ran is timed with kube's metric names and labels.
func admissionMetrics(t *testing.T, ts *testserver.TestServer, cs kubernetes.Interface) {
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "met")
	e2eutil.WaitDefaultSA(t, cs, "met")
	if _, err := cs.CoreV1().Pods("met").Create(ctx, e2eutil.Pod("p"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := cs.CoreV1().Pods("met").Create(ctx, e2eutil.Pod("x", func(p *corev1.Pod) { p.Spec.ServiceAccountName = "ghost" }), metav1.CreateOptions{})
	wantForbidden(t, err, "ghost")
	_, metrics := e2eutil.Get(t, ts.HTTPClient(t), ts.URL()+"/metrics")
	e2eutil.MustContain(t, "/metrics", metrics,
		"# TYPE apiserver_admission_step_admission_duration_seconds histogram",
		`apiserver_admission_step_admission_duration_seconds_bucket{operation="CREATE",rejected="false",type="admit",le="0.005"}`,
		`apiserver_admission_step_admission_duration_seconds_bucket{operation="CREATE",rejected="false",type="validate",le="2.5"}`,
		`apiserver_admission_step_admission_duration_seconds_count{operation="CREATE",rejected="true",type="admit"}`,
		"# TYPE apiserver_admission_controller_admission_duration_seconds histogram",
		`apiserver_admission_controller_admission_duration_seconds_bucket{name="ServiceAccount",operation="CREATE",rejected="false",type="admit",le="0.025"}`,
		`apiserver_admission_controller_admission_duration_seconds_count{name="ServiceAccount",operation="CREATE",rejected="true",type="admit"}`,
		`apiserver_admission_controller_admission_duration_seconds_count{name="LimitRanger",operation="CREATE",rejected="false",type="validate"}`,
		`apiserver_admission_controller_admission_duration_seconds_count{name="ResourceQuota",operation="CREATE",rejected="false",type="validate"}`,
		`apiserver_admission_controller_admission_duration_seconds_count{name="NamespaceLifecycle",operation="CREATE",rejected="false",type="validate"}`,
		`apiserver_admission_controller_admission_duration_seconds_count{name="DefaultTolerationSeconds",operation="CREATE",rejected="false",type="admit"}`,
	)
}

func leaseNamed(name string) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
