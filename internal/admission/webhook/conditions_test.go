package webhook

import (
	"context"
	"errors"
	"fmt"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

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
	}{
		{"all true", []string{"object.metadata.name == 'c'", "request.userInfo.username == 'alice'", "request.operation == 'CREATE'"}, false, "create", true, false},
		{"one false", []string{"true", "object.metadata.name.startsWith('skip-')"}, false, "create", false, false},
		{"old object on delete", []string{"object == null && oldObject.metadata.name == 'c'"}, false, "delete", true, false},
		{"false wins over an error", []string{"object.nope.deeper == 1", "false"}, false, "create", false, false},
		{"error under Fail", []string{"object.nope.deeper == 1"}, false, "create", false, true},
		{"error under Ignore", []string{"object.nope.deeper == 1"}, true, "create", false, false},
		{"does not compile", []string{"object.metadata.name ==="}, false, "create", false, true},
		{"not a bool", []string{"'text'"}, false, "create", false, true},
		{"dyn is not a bool", []string{"object.metadata.name"}, false, "create", false, true},
		{"request has no uid", []string{"request.uid != ''"}, false, "create", false, true},
		{"request is kube's type", []string{"request.kind.kind == 'ConfigMap' && request.resource.resource == 'configmaps' && request.dryRun == false && request.options.kind == 'CreateOptions'"}, false, "create", true, false},
		{"namespaceObject is null", []string{"namespaceObject == null"}, false, "create", true, false},
		{"authorizer allows", []string{"authorizer.group('').resource('pods').namespace('ns').check('create').allowed()"}, false, "create", true, false},
		{"authorizer denies", []string{"authorizer.group('').resource('secrets').namespace('ns').check('get').allowed()"}, false, "create", false, false},
		{"authorizer.requestResource", []string{"authorizer.requestResource.check('create').allowed()"}, false, "create", true, false},
		{"authorizer errors", []string{"authorizer.group('').resource('pods').check('fail').errored()"}, false, "create", true, false},
		{"includes is a stored expression", []string{"[1, 2].includes(2)"}, false, "create", true, false},
		{"over the cost budget", []string{expensive}, false, "create", false, true},
		{"over the cost budget, Ignore", []string{expensive}, true, "create", false, false},
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
			got, err := conds.match(ctx, &h, a, &Request{Attributes: a, User: user}, fakeAuthorizer{})
			if got != c.want || (err != nil) != c.wantError {
				t.Fatalf("got %v, %v", got, err)
			}
			if err != nil && !apierrors.IsForbidden(err) {
				t.Fatalf("not a 403: %v", err)
			}
		})
	}
}
