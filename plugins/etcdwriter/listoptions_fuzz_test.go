package etcdwriter

import (
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kpipe/kpipe/internal/api"
)

// FuzzListOptions feeds list parameters (label and field selectors, limit,
// continue, resourceVersion, resourceVersionMatch, watch and
// sendInitialEvents) from the query string through the list and watch
// option parsing: no panic, every refusal a 400 or 422 Status (a 422 one
// on ListOptions with its causes), every accepted selector prints to a
// string that parses back the same, and what is accepted keeps kube's
// ValidateListOptions rules.
func FuzzListOptions(f *testing.F) {
	// flags: 1 watch, 2 sendInitialEvents given, 4 its value.
	for _, s := range []struct {
		label, field, limit, cont, rv, match string
		flags                                uint8
	}{
		{"app=web", "metadata.name=x", "10", "", "", "", 0},
		{"app in (a,b),!canary,tier notin (x)", "metadata.namespace!=kube-system", "-1", "", "5", "NotOlderThan", 0},
		{"a==b,c!=d,e", "metadata.name=a,metadata.namespace=b", "99999999999999999999", "bogus", "0", "Exact", 0},
		{"x>1,y<2", `metadata.name=a\,b`, "0", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NSwic3RhcnQiOiJhIn0", "", "Bogus", 2},
		{"(((", "spec.nodeName=", "ten", "%%%", "abc", "", 1},
		{"a.b/c-d=e_f", "status.phase=Running", "1", "", "", "NotOlderThan", 7},
		{"", "", "", "", "0", "", 3},
	} {
		f.Add(s.label, s.field, s.limit, s.cont, s.rv, s.match, s.flags)
	}
	reg := api.NewRegistry(api.Resources(api.Options{}))
	cms, ok := reg.Lookup("", "v1", "configmaps")
	if !ok {
		f.Fatal("no configmaps resource")
	}
	f.Fuzz(func(t *testing.T, label, field, limit, cont, rv, match string, flags uint8) {
		q := url.Values{"labelSelector": {label}, "fieldSelector": {field}, "limit": {limit}, "continue": {cont},
			"resourceVersion": {rv}, "resourceVersionMatch": {match}}
		watch := flags&1 != 0
		if watch {
			q.Set("watch", "true")
		}
		if flags&2 != 0 {
			q.Set("sendInitialEvents", strconv.FormatBool(flags&4 != 0))
		}
		r := httptest.NewRequest("GET", "/api/v1/namespaces/default/configmaps?"+q.Encode(), nil)
		pred, opts, err := listOptions(r, cms)
		if err != nil {
			if code := apierrors.ReasonForError(err); code == "" || (!apierrors.IsBadRequest(err) && !apierrors.IsInvalid(err)) {
				t.Fatalf("refused with %v (%s), want a 400 or 422 Status", err, code)
			}
			if st := err.(apierrors.APIStatus).Status(); apierrors.IsInvalid(err) &&
				(st.Details == nil || st.Details.Kind != "ListOptions" || len(st.Details.Causes) == 0) {
				t.Fatalf("422 without ListOptions causes: %+v", st)
			}
			return
		}
		if opts == nil || pred.Limit < 0 {
			t.Fatalf("accepted with opts %v, limit %d", opts, pred.Limit)
		}
		m := opts.ResourceVersionMatch
		switch {
		case watch && opts.SendInitialEvents != nil && m != metav1.ResourceVersionMatchNotOlderThan,
			watch && opts.SendInitialEvents == nil && m != "":
			t.Fatalf("accepted a watch with sendInitialEvents %v and match %q", opts.SendInitialEvents, m)
		case !watch && opts.SendInitialEvents != nil:
			t.Fatalf("accepted a list with sendInitialEvents")
		case !watch && m != "" && (opts.ResourceVersion == "" || opts.Continue != "" ||
			m != metav1.ResourceVersionMatchExact && m != metav1.ResourceVersionMatchNotOlderThan ||
			m == metav1.ResourceVersionMatchExact && opts.ResourceVersion == "0"):
			t.Fatalf("accepted a list with match %q, resourceVersion %q, continue %q", m, opts.ResourceVersion, opts.Continue)
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
