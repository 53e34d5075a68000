package api

import (
	"net/url"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestParseListOptions pins kube's ValidateListOptions as the list, watch
// and deletecollection handlers apply it: the 422 names ListOptions with
// its causes, after the selector syntax and before the field labels.
func TestParseListOptions(t *testing.T) {
	reg := NewRegistry(Resources(Options{}))
	cms, ok := reg.Lookup("", "v1", "configmaps")
	if !ok {
		t.Fatal("no configmaps resource")
	}
	const prefix = `ListOptions.meta.k8s.io "" is invalid: `
	type cause struct{ field, msg string }
	cases := []struct {
		name   string
		query  string
		code   int32
		msg    string
		causes []cause
		// For an accepted watch: the defaulted sendInitialEvents.
		initial *bool
	}{
		{name: "plain list", query: ""},
		{name: "match with a resourceVersion", query: "resourceVersion=5&resourceVersionMatch=NotOlderThan"},
		{name: "exact match", query: "resourceVersion=5&resourceVersionMatch=Exact"},
		{name: "NotOlderThan from 0", query: "resourceVersion=0&resourceVersionMatch=NotOlderThan"},
		{name: "match without a resourceVersion", query: "resourceVersionMatch=NotOlderThan", code: 422,
			msg:    prefix + "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
			causes: []cause{{"resourceVersionMatch", "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"}}},
		{name: "exact from 0", query: "resourceVersion=0&resourceVersionMatch=Exact", code: 422,
			msg: prefix + `resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`},
		{name: "bogus match", query: "resourceVersion=5&resourceVersionMatch=Bogus", code: 422,
			msg: prefix + `resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""`},
		{name: "match with continue", query: "resourceVersion=5&resourceVersionMatch=Exact&continue=abc", code: 422,
			msg: prefix + "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided"},
		{name: "every list cause at once", query: "resourceVersionMatch=Bogus&continue=abc&sendInitialEvents=false", code: 422,
			msg: prefix + `[resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, ` +
				`resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided, ` +
				`resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", "", ` +
				`sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list]`,
			causes: []cause{
				{"resourceVersionMatch", "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"},
				{"resourceVersionMatch", "Forbidden: resourceVersionMatch is forbidden when continue is provided"},
				{"resourceVersionMatch", `Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""`},
				{"sendInitialEvents", "Forbidden: sendInitialEvents is forbidden for list"},
			}},
		{name: "sendInitialEvents on a list", query: "sendInitialEvents=true", code: 422,
			msg: prefix + "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"},
		{name: "plain watch defaults to initial events", query: "watch=true", initial: new(true)},
		{name: "watch from 0 defaults to initial events", query: "watch=true&resourceVersion=0", initial: new(true)},
		{name: "watch from a revision", query: "watch=true&resourceVersion=5"},
		{name: "watch list", query: "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", initial: new(true)},
		{name: "watch without initial events", query: "watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan", initial: new(false)},
		{name: "watch with initial events and no match", query: "watch=true&sendInitialEvents=true", code: 422,
			msg: prefix + "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"},
		{name: "watch with a match and no initial events", query: "watch=true&resourceVersionMatch=NotOlderThan", code: 422,
			msg: prefix + "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"},
		{name: "watch with an exact match", query: "watch=true&sendInitialEvents=true&resourceVersionMatch=Exact", code: 422,
			msg: prefix + `[resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, ` +
				`resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]`},
		{name: "watch list with continue", query: "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&continue=abc", code: 422,
			msg: prefix + "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided"},
		{name: "bad label selector comes first", query: "labelSelector=(((&resourceVersionMatch=Exact", code: 400},
		{name: "validation comes before the field label", query: "fieldSelector=spec.bogus=x&resourceVersionMatch=Exact", code: 422,
			msg: prefix + "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"},
		{name: "unknown field label", query: "fieldSelector=spec.bogus=x", code: 400, msg: "field label not supported: spec.bogus"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			lo, err := ParseListOptions(q, cms)
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if got := lo.SendInitialEvents; (got == nil) != (tc.initial == nil) || got != nil && *got != *tc.initial {
					t.Errorf("sendInitialEvents %v, want %v", got, tc.initial)
				}
				if tc.initial != nil && lo.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan {
					t.Errorf("resourceVersionMatch %q, want NotOlderThan", lo.ResourceVersionMatch)
				}
				return
			}
			st, ok := err.(apierrors.APIStatus)
			if !ok {
				t.Fatalf("got %v, want a %d Status", err, tc.code)
			}
			s := st.Status()
			if s.Code != tc.code || tc.msg != "" && s.Message != tc.msg {
				t.Fatalf("got %d %q\nwant %d %q", s.Code, s.Message, tc.code, tc.msg)
			}
			if tc.code != 422 {
				return
			}
			if s.Reason != metav1.StatusReasonInvalid || s.Details == nil || s.Details.Kind != "ListOptions" || s.Details.Group != "meta.k8s.io" || s.Details.Name != "" {
				t.Fatalf("details %+v, reason %s", s.Details, s.Reason)
			}
			if tc.causes == nil {
				return
			}
			if len(s.Details.Causes) != len(tc.causes) {
				t.Fatalf("causes %+v, want %+v", s.Details.Causes, tc.causes)
			}
			for i, c := range s.Details.Causes {
				if c.Field != tc.causes[i].field || c.Message != tc.causes[i].msg || c.Type == "" {
					t.Errorf("cause %d: %+v, want %+v", i, c, tc.causes[i])
				}
			}
		})
	}
}
