package api

import (
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// watchListEnabled is kube's WatchList feature gate, on by default in
// 1.37: it defaults a watch from "" or "0" to sendInitialEvents and lets a
// watch ask for them.
const watchListEnabled = true

// ListOptions are a list, watch or deletecollection's options with their
// selectors parsed.
type ListOptions struct {
	*metav1.ListOptions
	Label labels.Selector
	Field fields.Selector
}

// ParseListOptions reads the options of a list, watch or deletecollection
// of res from the query in the order kube's handlers do: parameters and
// selector syntax (400), then kube's defaults and ValidateListOptions
// (422 Invalid on ListOptions, with its causes), then the field labels the
// resource selects on (400). A negative limit stays as sent.
func ParseListOptions(q url.Values, res *Resource) (ListOptions, error) {
	var opts metav1.ListOptions
	if err := ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, &opts); err != nil {
		return ListOptions{}, apierrors.NewBadRequest(err.Error())
	}
	lo := ListOptions{ListOptions: &opts, Label: labels.Everything(), Field: fields.Everything()}
	if opts.LabelSelector != "" {
		sel, err := labels.Parse(opts.LabelSelector)
		if err != nil {
			return ListOptions{}, apierrors.NewBadRequest(err.Error())
		}
		lo.Label = sel
	}
	if opts.FieldSelector != "" {
		sel, err := fields.ParseSelector(opts.FieldSelector)
		if err != nil {
			return ListOptions{}, apierrors.NewBadRequest(err.Error())
		}
		lo.Field = sel
	}
	if err := validateListOptions(&opts); err != nil {
		return ListOptions{}, err
	}
	if !lo.Field.Empty() {
		_, known, err := res.Attrs(res.New())
		if err != nil {
			return ListOptions{}, err
		}
		for _, req := range lo.Field.Requirements() {
			if _, ok := known[req.Field]; !ok {
				return ListOptions{}, apierrors.NewBadRequest("field label not supported: " + req.Field)
			}
		}
	}
	return lo, nil
}

// validateListOptions applies kube's list option defaults to opts and
// checks them with kube's ValidateListOptions, which reads only these
// fields.
func validateListOptions(opts *metav1.ListOptions) error {
	in := internalversion.ListOptions{
		Watch:                opts.Watch,
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: opts.ResourceVersionMatch,
		Continue:             opts.Continue,
		SendInitialEvents:    opts.SendInitialEvents,
	}
	internalversion.SetListOptionsDefaults(&in, watchListEnabled)
	if errs := metavalidation.ValidateListOptions(&in, watchListEnabled); len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	opts.SendInitialEvents, opts.ResourceVersionMatch = in.SendInitialEvents, in.ResourceVersionMatch
	return nil
}
