package bootstrap

import (
	"context"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/pipeline"
)

// SystemNamespaces are created at start and recreated when deleted.
var SystemNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease}

// Controller is the hook instance.
type Controller struct {
	cfg *Config
	log *zap.Logger
}

var (
	_ pipeline.PostStartHook = (*Controller)(nil)
	_ pipeline.Provisioner   = (*Controller)(nil)
)

// Provision implements pipeline.Provisioner.
func (c *Controller) Provision(env *pipeline.Env) error {
	c.log = env.Log
	return nil
}

// Run creates the system namespaces through the loopback client, then
// returns so /readyz can pass, leaving a loop that keeps them present
// until ctx ends.
func (c *Controller) Run(ctx context.Context, env *pipeline.HookEnv) error {
	cs, err := kubernetes.NewForConfig(env.Loopback)
	if err != nil {
		return err
	}
	backoff := 50 * time.Millisecond
	for {
		err := c.ensureNamespaces(ctx, cs)
		if err == nil {
			break
		}
		c.log.Warn("creating system namespaces", zap.Error(err))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
	go c.loop(ctx, cs)
	return nil
}

func (c *Controller) loop(ctx context.Context, cs kubernetes.Interface) {
	t := time.NewTicker(c.cfg.SystemNamespacesInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := c.ensureNamespaces(ctx, cs); err != nil && ctx.Err() == nil {
				c.log.Warn("ensuring system namespaces", zap.Error(err))
			}
		}
	}
}

// ensureNamespaces creates each system namespace that does not exist.
func (c *Controller) ensureNamespaces(ctx context.Context, cs kubernetes.Interface) error {
	for _, name := range SystemNamespaces {
		_, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			continue
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		c.log.Info("created system namespace", zap.String("namespace", name))
	}
	return nil
}
