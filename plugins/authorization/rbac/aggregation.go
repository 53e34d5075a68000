package rbac

import (
	"context"
	"sort"
	"time"

	"go.uber.org/zap"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kpipe/kpipe/internal/pipeline"
)

// AggregationHook is the post-start hook that writes aggregated rules back.
const AggregationHook = "clusterrole-aggregation"

// aggregationManager is kube's field manager for the written rules.
const aggregationManager = "clusterrole-aggregation-controller"

// Aggregator is kube-controller-manager's clusterrole-aggregation
// controller as a post-start hook: every ClusterRole with an
// aggregationRule gets the rules of the roles its selectors match written
// into its rules, so that `kubectl get clusterrole view -o yaml` shows
// them. It watches ClusterRoles through the loopback client and writes
// again whenever a labelled role changes.
type Aggregator struct {
	log *zap.Logger
}

var (
	_ pipeline.PostStartHook = (*Aggregator)(nil)
	_ pipeline.Provisioner   = (*Aggregator)(nil)
)

// Provision implements pipeline.Provisioner.
func (g *Aggregator) Provision(env *pipeline.Env) error {
	g.log = env.Log
	return nil
}

// Run starts the watch and returns once it has synced; every change (and
// the first list) is then written as it is seen, until ctx ends. A failed
// write is retried with a backoff.
func (g *Aggregator) Run(ctx context.Context, env *pipeline.HookEnv) error {
	cs, err := kubernetes.NewForConfig(env.Loopback)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	inf := factory.Rbac().V1().ClusterRoles()
	dirty := make(chan struct{}, 1)
	mark := func() {
		select {
		case dirty <- struct{}{}:
		default:
		}
	}
	if _, err := inf.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { mark() },
		UpdateFunc: func(any, any) { mark() },
		DeleteFunc: func(any) { mark() },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
		return ctx.Err()
	}
	lister := inf.Lister()
	sync := func() error {
		roles, err := lister.List(labels.Everything())
		if err != nil {
			return err
		}
		return g.sync(ctx, cs, roles)
	}
	// Ready once the watch has synced: the writes follow, so readiness
	// never waits on them.
	mark()
	go func() {
		defer factory.Shutdown()
		backoff := 50 * time.Millisecond
		for {
			select {
			case <-ctx.Done():
				return
			case <-dirty:
			}
			if err := sync(); err != nil {
				if ctx.Err() != nil {
					return
				}
				g.log.Warn("clusterrole aggregation", zap.Error(err))
				time.AfterFunc(backoff, mark)
				backoff = min(2*backoff, 5*time.Second)
				continue
			}
			backoff = 50 * time.Millisecond
		}
	}()
	return nil
}

// sync writes each aggregated role whose stored rules differ from the
// aggregation, with a forced apply owned by kube's field manager, as the
// controller does.
func (g *Aggregator) sync(ctx context.Context, cs kubernetes.Interface, list []*rbacv1.ClusterRole) error {
	roles := make(map[string]*rbacv1.ClusterRole, len(list))
	for _, r := range list {
		roles[r.Name] = r
	}
	eff := EffectiveRules(roles)
	names := make([]string, 0, len(roles))
	for n, r := range roles {
		if r.AggregationRule != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		want := eff[n]
		if equality.Semantic.DeepEqual(want, roles[n].Rules) {
			continue
		}
		ac := rbacv1ac.ClusterRole(n)
		if want == nil {
			// An empty list, not a missing one, clears what was written.
			ac.Rules = []rbacv1ac.PolicyRuleApplyConfiguration{}
		}
		for _, r := range want {
			ac.WithRules(rbacv1ac.PolicyRule().
				WithVerbs(r.Verbs...).WithAPIGroups(r.APIGroups...).WithResources(r.Resources...).
				WithResourceNames(r.ResourceNames...).WithNonResourceURLs(r.NonResourceURLs...))
		}
		if _, err := cs.RbacV1().ClusterRoles().Apply(ctx, ac, metav1.ApplyOptions{FieldManager: aggregationManager, Force: true}); err != nil {
			return err
		}
	}
	return nil
}
