package watche2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

func gracePod(name, node string, grace *int64) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			TerminationGracePeriodSeconds: grace,
			Containers:                    []corev1.Container{{Name: "app", Image: "busybox:1"}},
		},
	}
}

func wantPodEvent(t *testing.T, w watch.Interface, typ watch.EventType) *corev1.Pod {
	t.Helper()
	ev := nextEvent(t, w)
	p, ok := ev.Object.(*corev1.Pod)
	if ev.Type != typ || !ok {
		t.Fatalf("got %s %T, want %s of a pod", ev.Type, ev.Object, typ)
	}
	return p
}

// testPodGracefulDeletion pins kube's pod strategy (CheckGracefulDelete)
// and rest.BeforeDelete: the period comes from the delete, else from the
// pod; unscheduled and finished pods go at once; a pending deletion may
// only be shortened; gracePeriodSeconds=0 removes the pod.
func testPodGracefulDeletion(t *testing.T, _ *testserver.TestServer, cs kubernetes.Interface) {
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "grace")
	pods := cs.CoreV1().Pods("grace")
	create := func(t *testing.T, p *corev1.Pod) *corev1.Pod {
		t.Helper()
		got, err := pods.Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	gone := func(t *testing.T, name string) {
		t.Helper()
		_, err := pods.Get(ctx, name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("pod %s: want NotFound, got %v", name, err)
		}
	}
	// marked checks a kept pod's period and that its deletionTimestamp is
	// about now+period (the server's clock is this one).
	marked := func(t *testing.T, name string, period int64, before time.Time) *corev1.Pod {
		t.Helper()
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("pod %s should stay while its grace period runs: %v", name, err)
		}
		if p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != period || p.DeletionTimestamp == nil {
			t.Fatalf("pod %s: deletionGracePeriodSeconds %v deletionTimestamp %v, want %d", name, p.DeletionGracePeriodSeconds, p.DeletionTimestamp, period)
		}
		lo := before.Add(time.Duration(period)*time.Second - time.Second)
		hi := time.Now().Add(time.Duration(period)*time.Second + time.Second)
		if at := p.DeletionTimestamp.Time; at.Before(lo) || at.After(hi) {
			t.Errorf("pod %s: deletionTimestamp %v, want between %v and %v", name, at, lo, hi)
		}
		return p
	}

	t.Run("unscheduled pod goes at once", func(t *testing.T) {
		create(t, gracePod("unscheduled", "", nil))
		w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=unscheduled", ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		wantPodEvent(t, w, watch.Added)
		if err := pods.Delete(ctx, "unscheduled", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		gone(t, "unscheduled")
		// As in kube, the pod is first marked with a zero period, then
		// removed: watchers see both writes.
		ev := nextEvent(t, w)
		if p, ok := ev.Object.(*corev1.Pod); ev.Type != watch.Modified || !ok || p.DeletionTimestamp == nil || ptr.Deref(p.DeletionGracePeriodSeconds, -1) != 0 {
			t.Fatalf("got %s %#v, want MODIFIED with a zero grace period", ev.Type, ev.Object)
		}
		wantPodEvent(t, w, watch.Deleted)
	})

	t.Run("scheduled pod keeps the spec's default 30s", func(t *testing.T) {
		created := create(t, gracePod("default", "node-1", nil))
		if ptr.Deref(created.Spec.TerminationGracePeriodSeconds, 0) != 30 {
			t.Fatalf("terminationGracePeriodSeconds defaulted to %v, want 30", created.Spec.TerminationGracePeriodSeconds)
		}
		before := time.Now()
		if err := pods.Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		first := marked(t, "default", 30, before)
		// A longer period, or none, leaves the deletion as it is.
		if err := pods.Delete(ctx, "default", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](60)}); err != nil {
			t.Fatal(err)
		}
		if err := pods.Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		again := marked(t, "default", 30, before)
		if !again.DeletionTimestamp.Equal(first.DeletionTimestamp) || again.ResourceVersion != first.ResourceVersion {
			t.Errorf("a longer period changed the pending deletion: %v@%s -> %v@%s", first.DeletionTimestamp, first.ResourceVersion, again.DeletionTimestamp, again.ResourceVersion)
		}
		// A shorter one moves the timestamp back by the difference.
		if err := pods.Delete(ctx, "default", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](10)}); err != nil {
			t.Fatal(err)
		}
		shorter := marked(t, "default", 10, before)
		if d := first.DeletionTimestamp.Sub(shorter.DeletionTimestamp.Time); d != 20*time.Second {
			t.Errorf("timestamp moved back by %v, want 20s", d)
		}
		// Removing a finalizer-free pod's grace period is the kubelet's
		// final delete: 0 removes it.
		if err := pods.Delete(ctx, "default", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatal(err)
		}
		gone(t, "default")
	})

	t.Run("the pod's terminationGracePeriodSeconds", func(t *testing.T) {
		create(t, gracePod("spec5", "node-1", ptr.To[int64](5)))
		before := time.Now()
		got, err := pods.Get(ctx, "spec5", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The delete answers with the marked pod.
		var deleted corev1.Pod
		if err := cs.CoreV1().RESTClient().Delete().Namespace("grace").Resource("pods").Name("spec5").Do(ctx).Into(&deleted); err != nil {
			t.Fatal(err)
		}
		if ptr.Deref(deleted.DeletionGracePeriodSeconds, -1) != 5 || deleted.ResourceVersion == got.ResourceVersion {
			t.Errorf("delete answered %v@%s, want the marked pod", deleted.DeletionGracePeriodSeconds, deleted.ResourceVersion)
		}
		marked(t, "spec5", 5, before)
	})

	t.Run("the delete's gracePeriodSeconds wins, a negative one is 1", func(t *testing.T) {
		create(t, gracePod("opt7", "node-1", nil))
		create(t, gracePod("neg", "node-1", nil))
		before := time.Now()
		if err := pods.Delete(ctx, "opt7", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](7)}); err != nil {
			t.Fatal(err)
		}
		if err := pods.Delete(ctx, "neg", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](-5)}); err != nil {
			t.Fatal(err)
		}
		marked(t, "opt7", 7, before)
		marked(t, "neg", 1, before)
	})

	t.Run("finished pods go at once", func(t *testing.T) {
		for _, phase := range []corev1.PodPhase{corev1.PodSucceeded, corev1.PodFailed} {
			name := strings.ToLower(string(phase))
			p := create(t, gracePod(name, "node-1", nil))
			p.Status.Phase = phase
			if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := pods.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](30)}); err != nil {
				t.Fatal(err)
			}
			gone(t, name)
		}
	})

	t.Run("dry run stores nothing", func(t *testing.T) {
		create(t, gracePod("dry", "node-1", nil))
		var answered corev1.Pod
		if err := cs.CoreV1().RESTClient().Delete().Namespace("grace").Resource("pods").Name("dry").Param("dryRun", "All").Do(ctx).Into(&answered); err != nil {
			t.Fatal(err)
		}
		if ptr.Deref(answered.DeletionGracePeriodSeconds, -1) != 30 {
			t.Errorf("dry run answered grace %v, want 30", answered.DeletionGracePeriodSeconds)
		}
		p, err := pods.Get(ctx, "dry", metav1.GetOptions{})
		if err != nil || p.DeletionTimestamp != nil {
			t.Fatalf("dry run changed the pod: %v %v", err, p.DeletionTimestamp)
		}
	})

	t.Run("finalizers removed during the grace period keep the pod", func(t *testing.T) {
		p := gracePod("finalized", "node-1", nil)
		p.Finalizers = []string{"example.com/hold"}
		create(t, p)
		before := time.Now()
		if err := pods.Delete(ctx, "finalized", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		got := marked(t, "finalized", 30, before)
		got.Finalizers = nil
		if _, err := pods.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		// kube deletes during an update only with no grace period left.
		marked(t, "finalized", 30, before)
		if err := pods.Delete(ctx, "finalized", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatal(err)
		}
		gone(t, "finalized")
	})

	t.Run("other types ignore gracePeriodSeconds", func(t *testing.T) {
		cms := cs.CoreV1().ConfigMaps("grace")
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cms.Delete(ctx, "cm", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](30)}); err != nil {
			t.Fatal(err)
		}
		if _, err := cms.Get(ctx, "cm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("want NotFound, got %v", err)
		}
	})
}

// testPropagationPolicy pins how kube records a delete's propagation
// policy: Orphan adds the orphan finalizer and Foreground the
// foregroundDeletion one, keeping the object with a deletionTimestamp;
// Background adds none; each type has its default; Events ignore it.
func testPropagationPolicy(t *testing.T, ts *testserver.TestServer, cs kubernetes.Interface) {
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "gc")
	cms := cs.CoreV1().ConfigMaps("gc")
	mk := func(t *testing.T, name string, finalizers ...string) {
		t.Helper()
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kept := func(t *testing.T, name string, want ...string) {
		t.Helper()
		got, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s should be kept: %v", name, err)
		}
		if got.DeletionTimestamp == nil || ptr.Deref(got.DeletionGracePeriodSeconds, -1) != 0 || strings.Join(got.Finalizers, ",") != strings.Join(want, ",") {
			t.Errorf("%s: deletionTimestamp %v grace %v finalizers %v, want finalizers %v", name, got.DeletionTimestamp, got.DeletionGracePeriodSeconds, got.Finalizers, want)
		}
	}
	policy := func(p metav1.DeletionPropagation) metav1.DeleteOptions {
		return metav1.DeleteOptions{PropagationPolicy: &p}
	}

	t.Run("Orphan adds the orphan finalizer and answers with the object", func(t *testing.T) {
		mk(t, "orphan")
		var got corev1.ConfigMap
		var code int
		err := cs.CoreV1().RESTClient().Delete().Namespace("gc").Resource("configmaps").Name("orphan").
			Body(&metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}).Do(ctx).StatusCode(&code).Into(&got)
		if err != nil || code != http.StatusOK {
			t.Fatalf("%d %v", code, err)
		}
		if got.Name != "orphan" || len(got.Finalizers) != 1 {
			t.Errorf("delete answered %+v, want the kept ConfigMap (not a Status)", got.ObjectMeta)
		}
		kept(t, "orphan", metav1.FinalizerOrphanDependents)
	})

	t.Run("Foreground adds foregroundDeletion", func(t *testing.T) {
		deps := cs.AppsV1().Deployments("gc")
		if _, err := deps.Create(ctx, e2eutil.WebDeployment(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := deps.Delete(ctx, "web", policy(metav1.DeletePropagationForeground)); err != nil {
			t.Fatal(err)
		}
		got, err := deps.Get(ctx, "web", metav1.GetOptions{})
		if err != nil || got.DeletionTimestamp == nil || strings.Join(got.Finalizers, ",") != metav1.FinalizerDeleteDependents {
			t.Fatalf("%v %+v", err, got.ObjectMeta)
		}
		// The first mark bumps a tracked generation, as markAsDeleting does.
		if got.Generation != 2 {
			t.Errorf("generation %d, want 2", got.Generation)
		}
	})

	t.Run("legacy orphanDependents", func(t *testing.T) {
		mk(t, "legacy")
		if err := cms.Delete(ctx, "legacy", metav1.DeleteOptions{OrphanDependents: ptr.To(true)}); err != nil {
			t.Fatal(err)
		}
		kept(t, "legacy", metav1.FinalizerOrphanDependents)
		// orphanDependents=false drops the orphan finalizer; an object
		// another finalizer keeps is answered 202, for old clients.
		mk(t, "accepted", "example.com/hold", metav1.FinalizerOrphanDependents)
		var code int
		err := cs.CoreV1().RESTClient().Delete().Namespace("gc").Resource("configmaps").Name("accepted").
			Body(&metav1.DeleteOptions{OrphanDependents: ptr.To(false)}).Do(ctx).StatusCode(&code).Error()
		if err != nil || code != http.StatusAccepted {
			t.Fatalf("got %d %v, want 202", code, err)
		}
		kept(t, "accepted", "example.com/hold")
	})

	t.Run("Background removes at once and drops an orphan finalizer", func(t *testing.T) {
		mk(t, "bg")
		if err := cms.Delete(ctx, "bg", policy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
		if _, err := cms.Get(ctx, "bg", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("want NotFound, got %v", err)
		}
		mk(t, "bg-orphan", metav1.FinalizerOrphanDependents)
		if err := cms.Delete(ctx, "bg-orphan", policy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
		if _, err := cms.Get(ctx, "bg-orphan", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("want NotFound, got %v", err)
		}
	})

	t.Run("an orphan finalizer is the default when none is asked", func(t *testing.T) {
		mk(t, "own", metav1.FinalizerOrphanDependents)
		if err := cms.Delete(ctx, "own", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		kept(t, "own", metav1.FinalizerOrphanDependents)
	})

	t.Run("Events ignore the policy", func(t *testing.T) {
		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "ev"}, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: "gc"}, Reason: "Test"}
		if _, err := cs.CoreV1().Events("gc").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cs.CoreV1().Events("gc").Delete(ctx, "ev", policy(metav1.DeletePropagationOrphan)); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().Events("gc").Get(ctx, "ev", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("want NotFound, got %v", err)
		}
	})

	t.Run("a namespace records the policy too", func(t *testing.T) {
		e2eutil.Namespace(t, cs, "gc-ns")
		if err := cs.CoreV1().Namespaces().Delete(ctx, "gc-ns", policy(metav1.DeletePropagationForeground)); err != nil {
			t.Fatal(err)
		}
		ns, err := cs.CoreV1().Namespaces().Get(ctx, "gc-ns", metav1.GetOptions{})
		if err != nil || ns.Status.Phase != corev1.NamespaceTerminating || strings.Join(ns.Finalizers, ",") != metav1.FinalizerDeleteDependents {
			t.Fatalf("%v %+v %s", err, ns.ObjectMeta, ns.Status.Phase)
		}
	})

	t.Run("bad options are 422 with kube's messages", func(t *testing.T) {
		mk(t, "bad")
		err := cms.Delete(ctx, "bad", metav1.DeleteOptions{OrphanDependents: ptr.To(true), PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set`)
		err = cms.Delete(ctx, "bad", policy("Sideways"))
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"`)
		// The query form of the options is checked the same way.
		c := e2eutil.MustLoopbackClient(t, ts)
		req, _ := http.NewRequest(http.MethodDelete, ts.Config.Host+"/api/v1/namespaces/gc/configmaps/bad?propagationPolicy=Sideways", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 422 {
			t.Errorf("query propagationPolicy=Sideways: %d, want 422", resp.StatusCode)
		}
		if _, err := cms.Get(ctx, "bad", metav1.GetOptions{}); err != nil {
			t.Errorf("a refused delete removed the object: %v", err)
		}
	})
}
