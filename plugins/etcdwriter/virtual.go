package etcdwriter

import (
	"net/http"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/request"
)

// createVirtual answers a create of a virtual resource or subresource
// (access reviews, TokenRequest): its handler's answer, nothing stored.
// A dry run gets the same answer: the handlers write nothing either way.
func (wr *Writer) createVirtual(w http.ResponseWriter, r *http.Request, res *api.Resource, info *request.RequestInfo, create api.CreateFunc) error {
	op, out, err := writeSetup(r)
	if err != nil {
		return err
	}
	// A subresource's handler reads its parent by the name (TokenRequest
	// its service account): kube's key check refuses a bad one first.
	if info.Name != "" {
		if err := api.CheckPathName(info.Name); err != nil {
			return err
		}
	}
	obj, err := create(r.Context(), info.Namespace, info.Name, op.Object)
	if err != nil {
		return err
	}
	gv := res.GroupVersion
	if sub := res.Subresources[info.Subresource]; sub != nil {
		gv = sub.GroupVersion
	}
	addWarnings(w, op.Warnings)
	return out.Encode(w, http.StatusCreated, obj, gv)
}

// checkWrite runs the resource's WriteCheck, if it has one and the
// validate stage has not (it runs it first, as kube checks escalation
// before validating; without that stage it runs here, so it is never
// skipped), on the object about to be stored.
func checkWrite(r *http.Request, res *api.Resource, op *request.Operation) error {
	if res.WriteCheck == nil || op.WriteChecked {
		return nil
	}
	return res.WriteCheck(r.Context(), op.Object, op.Old)
}
