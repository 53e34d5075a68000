package auth

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
)

type fixed Decision

func (f fixed) Authorize(context.Context, *Attributes) (Decision, string, error) {
	return Decision(f), "", nil
}

func TestHolderFailsClosedUntilSet(t *testing.T) {
	var nilHolder *Holder
	if d, _, err := nilHolder.Authorize(context.Background(), &Attributes{}); d != NoOpinion || !errors.Is(err, ErrNoAuthorizer) {
		t.Fatalf("nil holder: %v %v", d, err)
	}
	h := &Holder{}
	if d, _, err := h.Authorize(context.Background(), &Attributes{}); d != NoOpinion || !errors.Is(err, ErrNoAuthorizer) {
		t.Fatalf("empty holder: %v %v", d, err)
	}
	h.Set(fixed(Allow))
	if d, _, err := h.Authorize(context.Background(), &Attributes{}); d != Allow || err != nil {
		t.Fatalf("after Set: %v %v", d, err)
	}
	h.Set(fixed(Deny))
	if d, _, _ := h.Authorize(context.Background(), &Attributes{}); d != Deny {
		t.Fatalf("after second Set: %v", d)
	}
	h.Set(nil)
	if d, _, err := h.Authorize(context.Background(), &Attributes{}); d != NoOpinion || !errors.Is(err, ErrNoAuthorizer) || h.Current() != nil {
		t.Fatalf("after Set(nil): %v %v %v", d, err, h.Current())
	}
}

// An emptied failure hook hands the writer back as it is.
func TestFailureHookEmptied(t *testing.T) {
	h := &FailureHook{}
	h.Set(nil)
	rec := httptest.NewRecorder()
	if w := h.Wrap(rec, httptest.NewRequest("GET", "/", nil)); w != rec {
		t.Fatalf("Wrap = %T, want the writer given", w)
	}
}
