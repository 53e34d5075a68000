package admission

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/request"
)

type recorder map[string]string

func (r recorder) AddAnnotation(k, v string) {
	if _, ok := r[k]; !ok {
		r[k] = v
	}
}
func (recorder) RecordOperation(*request.Operation) {}

type annotating struct{ reject bool }

func (p annotating) Validate(_ context.Context, a *Attributes) error {
	if err := a.AddAnnotation("example.kpipe.io/seen", "yes"); err != nil {
		return err
	}
	if p.reject {
		return errors.New("no")
	}
	return nil
}

// What plugins annotate reaches the request's audit event, whether the
// request goes on or is refused.
func TestAnnotationsReachAudit(t *testing.T) {
	for _, reject := range []bool{false, true} {
		rec := recorder{}
		scope := &request.Scope{
			Info:  &request.RequestInfo{Verb: "create", Resource: "configmaps", Namespace: "default"},
			Op:    &request.Operation{Resource: &api.Resource{Name: "configmaps", Namespaced: true}, Namespace: "default", Name: "x"},
			Audit: rec,
		}
		ctx := request.WithScope(context.Background(), scope)
		h := Handler(TypeValidate, []Named[Validator]{{Name: "Annotating", Plugin: annotating{reject}}},
			func(p Validator, ctx context.Context, a *Attributes) error { return p.Validate(ctx, a) }, nil,
			http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", "/api/v1/namespaces/default/configmaps", nil).WithContext(ctx))
		if rec["example.kpipe.io/seen"] != "yes" {
			t.Errorf("rejected=%v: audit annotations %v, want the plugin's", reject, rec)
		}
		if reject && w.Code != http.StatusForbidden {
			t.Errorf("rejected: got %d", w.Code)
		}
	}
}
