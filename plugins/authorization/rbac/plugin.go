// Package rbac is kube's RBAC authorizer: Roles, ClusterRoles,
// RoleBindings and ClusterRoleBindings, read from an in-memory cache kept
// current by informers. It also offers kube's post-start hooks
// rbac/bootstrap-roles (default roles and bindings) and rbac/cache-sync, and
// the clusterrole-aggregation post-start hook.
package rbac

import (
	"context"
	"fmt"

	"go.uber.org/zap"
	rbacv1 "k8s.io/api/rbac/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/storage/informer"
)

// Name is the authorizer's name in apiserver.yaml.
const Name = "rbac"

// Hook names, kube's where kube has one.
const (
	BootstrapHook = "rbac/bootstrap-roles"
	CacheSyncHook = "rbac/cache-sync"
)

// Register adds the authorizer to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindAuthorizer,
		Description: "authorizes with Roles, ClusterRoles and their bindings (kube's RBAC).",
		New:         func(any) (any, error) { return &Authorizer{cache: newCache()}, nil },
	})
	r.MustRegister(pipeline.Plugin{
		Name:        AggregationHook,
		Kind:        pipeline.KindPostStartHook,
		Description: "writes the rules of aggregated ClusterRoles (admin, edit, view) into them, as kube's clusterrole-aggregation controller.",
		New:         func(any) (any, error) { return &Aggregator{}, nil },
	})
}

// Authorizer is kube's RBAC authorizer over the cache.
type Authorizer struct {
	cache *cache
	log   *zap.Logger
}

var (
	_ auth.Authorizer       = (*Authorizer)(nil)
	_ pipeline.Provisioner  = (*Authorizer)(nil)
	_ pipeline.HookProvider = (*Authorizer)(nil)
)

// Provision implements pipeline.Provisioner: it starts one informer per
// RBAC resource, ending with env.Context.
func (z *Authorizer) Provision(env *pipeline.Env) error {
	z.log = env.Log
	if z.log == nil {
		z.log = zap.NewNop()
	}
	if env.Shared == nil || env.Shared.Resources == nil {
		return fmt.Errorf("rbac: the server offers no resources")
	}
	informers := map[string]*informer.Informer{}
	for _, name := range resources {
		res, ok := env.Shared.Resources.Lookup(rbacv1.GroupName, "v1", name)
		if !ok || res.Store == nil {
			return fmt.Errorf("rbac: %s.%s is not served with storage", name, rbacv1.GroupName)
		}
		informers[name] = informer.New(informer.Source{Store: res.Store, Key: res.CollectionKey(env.Shared.StoragePrefix, ""), NewList: res.NewList},
			z.log.With(zap.String("rbac", name)))
	}
	z.cache.run(env.Context, informers)
	return nil
}

// Authorize implements auth.Authorizer. Like kube's, it never denies: it
// allows or has no opinion, with the errors it met (a missing role) as the
// reason.
func (z *Authorizer) Authorize(_ context.Context, a *auth.Attributes) (auth.Decision, string, error) {
	if a.User == nil {
		return auth.NoOpinion, "", nil
	}
	select {
	case <-z.cache.synced():
	default:
		return auth.NoOpinion, "RBAC: " + errNotSynced.Error(), nil
	}
	ok, reason, errs := z.cache.authorize(a)
	if ok {
		return auth.Allow, reason, nil
	}
	if len(errs) > 0 {
		return auth.NoOpinion, fmt.Sprintf("RBAC: %v", utilerrors.NewAggregate(errs)), nil
	}
	return auth.NoOpinion, "", nil
}

// PostStartHooks implements pipeline.HookProvider: readiness waits for the
// cache, and the default roles are reconciled through the loopback client.
func (z *Authorizer) PostStartHooks() []pipeline.NamedHook {
	return []pipeline.NamedHook{
		{Name: CacheSyncHook, Hook: hookFunc(z.waitSynced)},
		{Name: BootstrapHook, Hook: hookFunc(z.bootstrap)},
	}
}

func (z *Authorizer) waitSynced(ctx context.Context, _ *pipeline.HookEnv) error {
	select {
	case <-z.cache.synced():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hookFunc adapts a func to pipeline.PostStartHook.
type hookFunc func(ctx context.Context, env *pipeline.HookEnv) error

func (f hookFunc) Run(ctx context.Context, env *pipeline.HookEnv) error { return f(ctx, env) }
