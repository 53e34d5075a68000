// Package priorityclasses is kube's scheduling/bootstrap-system-priority-classes
// post-start hook: it creates the system-node-critical and
// system-cluster-critical PriorityClasses when they are missing.
package priorityclasses

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the hook's name in apiserver.yaml's postStartHooks, kube's.
const Name = "scheduling/bootstrap-system-priority-classes"

// systemCriticalPriority is kube's scheduling.SystemCriticalPriority.
const systemCriticalPriority = 2 * 1000000000

// SystemPriorityClasses are kube's bootstrap classes.
func SystemPriorityClasses() []*schedulingv1.PriorityClass {
	return []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "system-node-critical"}, Value: systemCriticalPriority + 1000,
			Description: "Used for system critical pods that must not be moved from their current node."},
		{ObjectMeta: metav1.ObjectMeta{Name: "system-cluster-critical"}, Value: systemCriticalPriority,
			Description: "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."},
	}
}

// Register adds the hook to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindPostStartHook,
		Description: "creates kube's system PriorityClasses when missing.",
		New:         func(any) (any, error) { return &Hook{}, nil },
	})
}

// Hook is the hook instance.
type Hook struct{ log *zap.Logger }

// Provision implements pipeline.Provisioner.
func (h *Hook) Provision(env *pipeline.Env) error {
	h.log = env.Log
	return nil
}

// Run creates the classes, retrying for up to 30 s as kube does; it is
// ready once both exist.
func (h *Hook) Run(ctx context.Context, env *pipeline.HookEnv) error {
	cs, err := kubernetes.NewForConfig(env.Loopback)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err = h.ensure(ctx, cs)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("unable to add default system priority classes: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func (h *Hook) ensure(ctx context.Context, cs kubernetes.Interface) error {
	for _, pc := range SystemPriorityClasses() {
		_, err := cs.SchedulingV1().PriorityClasses().Get(ctx, pc.Name, metav1.GetOptions{})
		if err == nil {
			continue
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		if _, err := cs.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		h.log.Info("created PriorityClass", zap.String("name", pc.Name), zap.Int32("value", pc.Value))
	}
	return nil
}
