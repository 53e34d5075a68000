package etcdwriter

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/request"
)

// The RBAC escalation check runs here unless the validate stage ran it:
// a pipeline without that stage still cannot skip it.
func TestCheckWriteRunsUnlessChecked(t *testing.T) {
	refused := errors.New("escalation")
	calls := 0
	res := &api.Resource{WriteCheck: func(context.Context, runtime.Object, runtime.Object) error {
		calls++
		return refused
	}}
	r := httptest.NewRequest("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", nil)
	if err := checkWrite(r, res, &request.Operation{}); !errors.Is(err, refused) || calls != 1 {
		t.Fatalf("unchecked write: err %v after %d calls, want the check's refusal", err, calls)
	}
	if err := checkWrite(r, res, &request.Operation{WriteChecked: true}); err != nil || calls != 1 {
		t.Fatalf("checked write: err %v after %d calls, want it passed without a second check", err, calls)
	}
	if err := checkWrite(r, &api.Resource{}, &request.Operation{}); err != nil {
		t.Fatalf("no check: %v", err)
	}
}
