package rbac

import (
	"context"
	"sort"
	"time"

	"go.uber.org/zap"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/kubernetes"

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
// them, and again whenever a labelled role changes.
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

// Run starts the loop and returns: each second the ClusterRoles are
// listed through the loopback client and the aggregated ones written when
// they differ. A list, not a watch: a watch is a request that never ends,
// and would keep a reloaded pipeline's old generation from draining.
func (g *Aggregator) Run(ctx context.Context, env *pipeline.HookEnv) error {
	cs, err := kubernetes.NewForConfig(env.Loopback)
	if err != nil {
		return err
	}
	go func() {
		t := time.NewTicker(aggregationInterval)
		defer t.Stop()
		for {
			if list, err := cs.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{}); err == nil {
				roles := make([]*rbacv1.ClusterRole, len(list.Items))
				for i := range list.Items {
					roles[i] = &list.Items[i]
				}
				err = g.sync(ctx, cs, roles)
				if err != nil && ctx.Err() == nil {
					g.log.Warn("clusterrole aggregation", zap.Error(err))
				}
			} else if ctx.Err() == nil {
				g.log.Warn("clusterrole aggregation", zap.Error(err))
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return nil
}

// aggregationInterval is how often the roles are compared.
const aggregationInterval = time.Second

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
