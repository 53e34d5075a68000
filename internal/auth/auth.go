// Package auth holds the contracts of the authentication and
// authorization stages' plugin lists: authenticators and authorizers.
package auth

import (
	"context"
	"net/http"

	"github.com/kpipe/kpipe/internal/request"
)

// Authenticator recognises a credential. It returns ok=false when the
// request carries no credential of its kind (the next one is asked), and
// an error when it carries one that is not valid (the request is refused
// with 401, never passed to anonymous).
type Authenticator interface {
	AuthenticateRequest(r *http.Request) (u *request.User, ok bool, err error)
}

// Decision is an authorizer's answer.
type Decision int

// kube's three answers: only Allow lets a request through, Deny stops the
// list, NoOpinion asks the next authorizer.
const (
	NoOpinion Decision = iota
	Allow
	Deny
)

// Attributes are what is authorized: kube's authorizer.Attributes.
type Attributes struct {
	User *request.User
	// Verb is the request verb (get, list, create, ...) for resource
	// requests, the lowercased HTTP method for non-resource ones, or a
	// special verb (impersonate, bind, escalate).
	Verb            string
	Namespace       string
	APIGroup        string
	APIVersion      string
	Resource        string
	Subresource     string
	Name            string
	ResourceRequest bool
	// Path is the request path of a non-resource request.
	Path string
	// FieldSelector and LabelSelector are the request's selectors as
	// written (list, watch and deletecollection only), for authorizers
	// that pass them on, as kube's field and label selector attributes.
	FieldSelector string
	LabelSelector string
}

// Authorizer decides on attributes. reason explains a Deny or an Allow
// (it may be empty).
type Authorizer interface {
	Authorize(ctx context.Context, a *Attributes) (d Decision, reason string, err error)
}
