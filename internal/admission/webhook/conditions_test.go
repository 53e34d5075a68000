package webhook

import (
	"context"
	"fmt"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

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
			defer func(b uint64) { conditionCostBudget = b }(conditionCostBudget)
			conditionCostBudget = 5000
			conds := compileConditions(mcs)
			a := attrs(c.verb, cm("c", nil), nil, false)
			if c.verb == "delete" {
				a = attrs(c.verb, nil, cm("c", nil), false)
			}
			got, err := conds.match(context.Background(), &h, a, &Request{Attributes: a, User: user})
			if got != c.want || (err != nil) != c.wantError {
				t.Fatalf("got %v, %v", got, err)
			}
			if err != nil && !apierrors.IsForbidden(err) {
				t.Fatalf("not a 403: %v", err)
			}
		})
	}
}
