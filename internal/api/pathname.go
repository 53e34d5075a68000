package api

import (
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validate/content"
)

// CheckPathName is kube's check of an object name from a request's path
// (its registry's key functions): ".", ".." and names holding "/" or "%"
// are a 400 "Name parameter invalid", whatever the verb.
func CheckPathName(name string) error {
	if msgs := content.IsPathSegmentName(name); len(msgs) > 0 {
		return apierrors.NewBadRequest(fmt.Sprintf("Name parameter invalid: %q: %s", name, strings.Join(msgs, ";")))
	}
	return nil
}
