package webhook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kpipe/kpipe/internal/admission"
	policycel "github.com/kpipe/kpipe/internal/admission/cel"
	"github.com/kpipe/kpipe/internal/request"
)

// expensive costs more than the budget the test sets: 100 x 100
// iterations.
var expensive = func() string {
	l := "[0"
	for i := 1; i < 100; i++ {
		l += fmt.Sprintf(",%d", i)
	}
	l += "]"
	return l + ".all(x, " + l + ".all(y, x + y >= 0))"
}()

// fakeAuthorizer lets alice create pods and configmaps in ns, and fails
// the verb "fail".
type fakeAuthorizer struct{}

func (fakeAuthorizer) Authorize(_ context.Context, c policycel.AuthzCheck) (bool, string, error) {
	if c.Verb == "fail" {
		return false, "", errors.New("no")
	}
	ok := c.User.Name == "alice" && c.ResourceRequest && c.Group == "" && c.Namespace == "ns" && c.Verb == "create" &&
		(c.Resource == "pods" || c.Resource == "configmaps")
	return ok, "", nil
}

func TestMatchConditions(t *testing.T) {
	user := &request.User{Name: "alice", Groups: []string{"devs"}}
	for _, c := range []struct {
		name      string
		exprs     []string
		ignore    bool
		verb      string
		want      bool
		wantError bool
		// kube's match condition metrics: evaluation errors counted, the
		// webhook counted as excluded, the evaluation timed.
		wantEvalErrors      float64
		wantExcluded, timed bool
	}{
		{"all true", []string{"object.metadata.name == 'c'", "request.userInfo.username == 'alice'", "request.operation == 'CREATE'"}, false, "create", true, false, 0, false, false},
		{"one false", []string{"true", "object.metadata.name.startsWith('skip-')"}, false, "create", false, false, 0, true, true},
		{"old object on delete", []string{"object == null && oldObject.metadata.name == 'c'"}, false, "delete", true, false, 0, false, false},
		{"false wins over an error", []string{"object.nope.deeper == 1", "false"}, false, "create", false, false, 1, true, true},
		{"error under Fail", []string{"object.nope.deeper == 1"}, false, "create", false, true, 1, false, true},
		{"error under Ignore", []string{"object.nope.deeper == 1"}, true, "create", false, false, 1, true, true},
		{"does not compile", []string{"object.metadata.name ==="}, false, "create", false, true, 1, false, true},
		{"not a bool", []string{"'text'"}, false, "create", false, true, 1, false, true},
		{"dyn is not a bool", []string{"object.metadata.name"}, false, "create", false, true, 1, false, true},
		{"request has no uid", []string{"request.uid != ''"}, false, "create", false, true, 1, false, true},
		{"request is kube's type", []string{"request.kind.kind == 'ConfigMap' && request.resource.resource == 'configmaps' && request.dryRun == false && request.options.kind == 'CreateOptions'"}, false, "create", true, false, 0, false, false},
		{"namespaceObject is null", []string{"namespaceObject == null"}, false, "create", true, false, 0, false, false},
		{"authorizer allows", []string{"authorizer.group('').resource('pods').namespace('ns').check('create').allowed()"}, false, "create", true, false, 0, false, false},
		{"authorizer denies", []string{"authorizer.group('').resource('secrets').namespace('ns').check('get').allowed()"}, false, "create", false, false, 0, true, true},
		{"authorizer.requestResource", []string{"authorizer.requestResource.check('create').allowed()"}, false, "create", true, false, 0, false, false},
		{"authorizer errors", []string{"authorizer.group('').resource('pods').check('fail').errored()"}, false, "create", true, false, 0, false, false},
		{"includes is a stored expression", []string{"[1, 2].includes(2)"}, false, "create", true, false, 0, false, false},
		{"over the cost budget", []string{expensive}, false, "create", false, true, 0, false, true},
		{"over the cost budget, Ignore", []string{expensive}, true, "create", false, false, 0, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mcs []admissionregistrationv1.MatchCondition
			for i, e := range c.exprs {
				mcs = append(mcs, admissionregistrationv1.MatchCondition{Name: string(rune('a' + i)), Expression: e})
			}
			h := testHook("https://127.0.0.1:1/x", nil)
			if c.ignore {
				h.FailurePolicy = admissionregistrationv1.Ignore
			}
			defer func(b int64) { conditionCostBudget = b }(conditionCostBudget)
			conditionCostBudget = 5000
			conds := compileConditions(mcs)
			a := attrs(c.verb, cm("c", nil), nil, false)
			if c.verb == "delete" {
				a = attrs(c.verb, nil, cm("c", nil), false)
			}
			ctx := request.WithScope(context.Background(), &request.Scope{User: user})
			reg := prometheus.NewRegistry()
			metrics := admission.NewMatchConditionMetrics(func(c prometheus.Collector) prometheus.Collector { reg.MustRegister(c); return c })
			m := &RuleMatcher{Authorizer: fakeAuthorizer{}, Type: TypeValidating, Metrics: metrics}
			got, err := conds.match(ctx, &h, a, &Request{Attributes: a, User: user}, m)
			if got != c.want || (err != nil) != c.wantError {
				t.Fatalf("got %v, %v", got, err)
			}
			labels := fmt.Sprintf(`{kind="webhook",name=%q,operation=%q,type="validating"}`, h.Name, a.Operation)
			wantMetrics := ""
			if c.wantEvalErrors > 0 {
				wantMetrics += fmt.Sprintf("apiserver_admission_match_condition_evaluation_errors_total%s %v\n", labels, c.wantEvalErrors)
			}
			if c.timed {
				wantMetrics += fmt.Sprintf("apiserver_admission_match_condition_evaluation_seconds_count%s 1\n", labels)
			}
			if c.wantExcluded {
				wantMetrics += fmt.Sprintf("apiserver_admission_match_condition_exclusions_total%s 1\n", labels)
			}
			if gotMetrics := matchMetrics(t, reg); gotMetrics != wantMetrics {
				t.Errorf("metrics:\n%s\nwant:\n%s", gotMetrics, wantMetrics)
			}
			if err != nil && !apierrors.IsForbidden(err) {
				t.Fatalf("not a 403: %v", err)
			}
		})
	}
}

// matchMetrics prints the match condition series of reg, one line each
// (counters and histogram counts), by name as Gather sorts them.
func matchMetrics(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := []string{}
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			ls := "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.GetCounter() != nil:
				out += fmt.Sprintf("%s%s %v\n", mf.GetName(), ls, m.GetCounter().GetValue())
			case m.GetHistogram() != nil:
				out += fmt.Sprintf("%s_count%s %v\n", mf.GetName(), ls, m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}
