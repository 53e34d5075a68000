package etcdwriter

import (
	"net/http/httptest"
	"net/url"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kpipe/kpipe/internal/api"
)

// FuzzListOptions feeds list parameters (label and field selectors, limit,
// continue, resourceVersion) from the query string through the list and
// watch option parsing: no panic, every refusal a 400 or 422 Status, and
// every accepted selector prints to a string that parses back the same.
func FuzzListOptions(f *testing.F) {
	for _, s := range []struct{ label, field, limit, cont string }{
		{"app=web", "metadata.name=x", "10", ""},
		{"app in (a,b),!canary,tier notin (x)", "metadata.namespace!=kube-system", "-1", ""},
		{"a==b,c!=d,e", "metadata.name=a,metadata.namespace=b", "99999999999999999999", "bogus"},
		{"x>1,y<2", `metadata.name=a\,b`, "0", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NSwic3RhcnQiOiJhIn0"},
		{"(((", "spec.nodeName=", "ten", "%%%"},
		{"a.b/c-d=e_f", "status.phase=Running", "1", ""},
	} {
		f.Add(s.label, s.field, s.limit, s.cont)
	}
	reg := api.NewRegistry(api.Resources(api.Options{}))
	cms, ok := reg.Lookup("", "v1", "configmaps")
	if !ok {
		f.Fatal("no configmaps resource")
	}
	f.Fuzz(func(t *testing.T, label, field, limit, cont string) {
		q := url.Values{"labelSelector": {label}, "fieldSelector": {field}, "limit": {limit}, "continue": {cont}}
		r := httptest.NewRequest("GET", "/api/v1/namespaces/default/configmaps?"+q.Encode(), nil)
		pred, opts, err := listOptions(r, cms)
		if err != nil {
			if code := apierrors.ReasonForError(err); code == "" || (!apierrors.IsBadRequest(err) && !apierrors.IsInvalid(err)) {
				t.Fatalf("refused with %v (%s), want a 400 or 422 Status", err, code)
			}
			return
		}
		if opts == nil || pred.Limit < 0 {
			t.Fatalf("accepted with opts %v, limit %d", opts, pred.Limit)
		}
		if s := pred.Label.String(); s != "" {
			again, err := labels.Parse(s)
			if err != nil || again.String() != s {
				t.Fatalf("label selector %q prints as %q, which parses as %v, %v", label, s, again, err)
			}
		}
		if s := pred.Field.String(); s != "" {
			again, err := fields.ParseSelector(s)
			if err != nil || again.String() != s {
				t.Fatalf("field selector %q prints as %q, which parses as %v, %v", field, s, again, err)
			}
		}
	})
}
