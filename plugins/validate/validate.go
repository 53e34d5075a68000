package validate

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/api/status"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
)

// Stage is the validate stage. It holds no state, so re-entering it on a
// retried write is safe.
type Stage struct{}

var _ pipeline.Stage = (*Stage)(nil)

// Middleware implements pipeline.Stage.
func (s *Stage) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op, ok := request.OperationFrom(r.Context())
		// Scale and eviction are checked where the terminal stage applies
		// them to their parent. Virtual resources (access reviews,
		// TokenRequest) are never stored: their handlers check what they
		// are sent.
		if !ok || op.Object == nil || op.Resource.CheckedByWriter(op.Subresource) || op.Resource.VirtualCreate(op.Subresource) != nil {
			next.ServeHTTP(w, r)
			return
		}
		// kube's RBAC storage refuses an escalation before the object is
		// validated: an invalid role that escalates is a 403, not a 422.
		if check := op.Resource.WriteCheck; check != nil {
			if err := check(r.Context(), op.Object, op.Old); err != nil {
				status.Write(w, err)
				return
			}
			op.WriteChecked = true
		}
		var err error
		if op.Old == nil {
			err = beforeCreate(op, time.Now())
		} else {
			err = beforeUpdate(op)
		}
		if err != nil {
			status.Write(w, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// beforeCreate wipes what a client may not set, names the object from
// generateName, fills the system fields, lets the strategy prepare it and
// validates it.
func beforeCreate(op *request.Operation, now time.Time) error {
	res := op.Resource
	m, err := meta.Accessor(op.Object)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	m.SetUID("")
	m.SetCreationTimestamp(metav1.Time{})
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetResourceVersion("")
	m.SetGeneration(0)
	m.SetSelfLink("")
	if m.GetName() == "" && m.GetGenerateName() != "" {
		m.SetName(api.GenerateName(m.GetGenerateName()))
	}
	op.Name = m.GetName()
	m.SetUID(types.UID(uuid.NewString()))
	m.SetCreationTimestamp(metav1.NewTime(now.Truncate(time.Second)))
	dedupOwnerReferences(op, m)

	res.Strategy.PrepareForCreate(op.Object)
	if errs := res.Strategy.Validate(op.Object); len(errs) > 0 {
		return invalid(res, m.GetName(), errs)
	}
	if w, ok := res.Strategy.(api.Warner); ok {
		warn(op, w.WarningsOnCreate(op.Object))
	}
	return nil
}

// warn adds the strategy's warnings, each once: a write retried from
// decode passes here again.
func warn(op *request.Operation, msgs []string) {
	for _, msg := range msgs {
		if !slices.Contains(op.Warnings, msg) {
			op.Warn(msg)
		}
	}
}

// beforeUpdate keeps the system fields of the live object, lets the
// strategy (or the status strategy) prepare the update and validates it.
func beforeUpdate(op *request.Operation) error {
	res := op.Resource
	m, err := meta.Accessor(op.Object)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	old, err := meta.Accessor(op.Old)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if uid := m.GetUID(); uid != "" && uid != old.GetUID() {
		return apierrors.NewConflict(res.GroupResource(), m.GetName(),
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, old.GetUID()))
	}
	m.SetUID(old.GetUID())
	m.SetCreationTimestamp(old.GetCreationTimestamp())
	m.SetDeletionTimestamp(old.GetDeletionTimestamp())
	m.SetDeletionGracePeriodSeconds(old.GetDeletionGracePeriodSeconds())
	m.SetGeneration(old.GetGeneration())
	m.SetSelfLink("")
	dedupOwnerReferences(op, m)

	var errs field.ErrorList
	if sub := res.Subresources[op.Subresource]; sub != nil {
		var st api.StatusStrategy = api.GenericStatus{}
		if sub.Strategy != nil {
			st = sub.Strategy
		}
		st.PrepareForUpdate(op.Object, op.Old)
		errs = st.ValidateUpdate(op.Object, op.Old)
		if w, ok := st.(api.Warner); ok && len(errs) == 0 {
			warn(op, w.WarningsOnUpdate(op.Object, op.Old))
		}
	} else {
		res.Strategy.PrepareForUpdate(op.Object, op.Old)
		errs = res.Strategy.ValidateUpdate(op.Object, op.Old)
		if w, ok := res.Strategy.(api.Warner); ok && len(errs) == 0 {
			warn(op, w.WarningsOnUpdate(op.Object, op.Old))
		}
	}
	if len(errs) > 0 {
		return invalid(res, m.GetName(), errs)
	}
	return nil
}

func invalid(res *api.Resource, name string, errs field.ErrorList) error {
	return apierrors.NewInvalid(res.GroupVersionKind().GroupKind(), name, errs)
}

// dedupOwnerReferences drops repeated owner references, with kube's
// warning.
func dedupOwnerReferences(op *request.Operation, m metav1.Object) {
	refs := m.GetOwnerReferences()
	if len(refs) < 2 {
		return
	}
	seen := map[types.UID]bool{}
	out := refs[:0:0]
	var dups []types.UID
	for _, ref := range refs {
		if seen[ref.UID] {
			dups = append(dups, ref.UID)
			continue
		}
		seen[ref.UID] = true
		out = append(out, ref)
	}
	if len(dups) > 0 {
		m.SetOwnerReferences(out)
		op.Warn(fmt.Sprintf(".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: %v", strings.Join(uidStrings(dups), ", ")))
	}
}

func uidStrings(uids []types.UID) []string {
	out := make([]string, len(uids))
	for i, u := range uids {
		out[i] = string(u)
	}
	return out
}
