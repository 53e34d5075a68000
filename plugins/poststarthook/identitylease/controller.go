package identitylease

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kpipe/kpipe/internal/pipeline"
)

// kube's identity lease labels.
const (
	IdentityLabel = "apiserver.kubernetes.io/identity"
	identityValue = "kube-apiserver"
	hostnameLabel = "kubernetes.io/hostname"
)

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

// ID is the lease name of a server: kube hashes the hostname; the address
// and port join it here so replicas on one host (tests, a laptop) differ.
func ID(hostname string, addr net.IP, port int) string {
	h := sha256.Sum256([]byte(hostname + "_" + net.JoinHostPort(addr.String(), strconv.Itoa(port))))
	return "apiserver-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(h[:16]))
}

// Run writes the lease once, then renews it and collects expired ones
// until ctx ends.
func (c *Controller) Run(ctx context.Context, env *pipeline.HookEnv) error {
	cs, err := kubernetes.NewForConfig(env.Loopback)
	if err != nil {
		return err
	}
	hostname, _ := os.Hostname()
	id := ID(hostname, env.AdvertiseAddress, env.SecurePort)
	renew := func() error { return c.renew(ctx, cs, id, hostname) }
	// /readyz waits for the first write; a failure is retried.
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, 5*time.Second) {
		err := renew()
		if err == nil {
			break
		}
		c.log.Warn("writing the identity lease", zap.Error(err))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
	}
	go c.every(ctx, "renewing the identity lease", c.cfg.RenewInterval, renew)
	go c.every(ctx, "collecting expired identity leases", c.cfg.GCInterval, func() error { return c.collect(ctx, cs, id) })
	return nil
}

func (c *Controller) renew(ctx context.Context, cs kubernetes.Interface, id, hostname string) error {
	leases := cs.CoordinationV1().Leases(metav1.NamespaceSystem)
	now := metav1.NewMicroTime(time.Now())
	l, err := leases.Get(ctx, id, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		l = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: metav1.NamespaceSystem,
				Labels: map[string]string{IdentityLabel: identityValue, hostnameLabel: hostname}},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(id),
				LeaseDurationSeconds: ptr.To(int32(c.cfg.LeaseDuration / time.Second)),
				AcquireTime:          &now,
				RenewTime:            &now,
			},
		}
		_, err = leases.Create(ctx, l, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	l.Spec.RenewTime = &now
	l.Spec.HolderIdentity = ptr.To(id)
	l.Spec.LeaseDurationSeconds = ptr.To(int32(c.cfg.LeaseDuration / time.Second))
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	return err
}

// collect deletes identity leases whose holder stopped renewing them.
func (c *Controller) collect(ctx context.Context, cs kubernetes.Interface, self string) error {
	leases := cs.CoordinationV1().Leases(metav1.NamespaceSystem)
	list, err := leases.List(ctx, metav1.ListOptions{LabelSelector: IdentityLabel + "=" + identityValue})
	if err != nil {
		return err
	}
	for _, l := range list.Items {
		if l.Name == self || !expired(&l, time.Now()) {
			continue
		}
		rv := l.ResourceVersion
		err := leases.Delete(ctx, l.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
		if err == nil {
			c.log.Info("deleted expired identity lease", zap.String("lease", l.Name))
		}
	}
	return nil
}

func expired(l *coordinationv1.Lease, now time.Time) bool {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return true
	}
	return l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second).Before(now)
}

// every runs fn every interval until ctx ends; a failure is logged and
// retried with backoff.
func (c *Controller) every(ctx context.Context, what string, interval time.Duration, fn func() error) {
	backoff := 50 * time.Millisecond
	for {
		wait := interval
		if err := fn(); err != nil && ctx.Err() == nil {
			c.log.Warn(what, zap.Error(err))
			wait = min(backoff, interval)
			backoff = min(2*backoff, 30*time.Second)
		} else {
			backoff = 50 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}
