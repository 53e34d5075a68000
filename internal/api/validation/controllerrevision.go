package validation

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(true, validateControllerRevisionCreate, validateControllerRevisionUpdate, nil)
}

var controllerRevisionDataPath = field.NewPath("data")

// validateControllerRevision is kube's validateControllerRevision: the
// metadata and a revision that is not negative.
func validateControllerRevision(r *appsv1.ControllerRevision) field.ErrorList {
	errs := objectMeta(&r.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	return append(errs, nonNegative(r.Revision, field.NewPath("revision"))...)
}

// validateControllerRevisionCreate is kube's ValidateControllerRevisionCreate:
// data must be a JSON object. A JSON null decodes to no raw bytes.
func validateControllerRevisionCreate(r *appsv1.ControllerRevision) field.ErrorList {
	errs := validateControllerRevision(r)
	if r.Data.Raw == nil {
		return append(errs, field.Required(controllerRevisionDataPath, "data is mandatory"))
	}
	var v any
	if err := json.Unmarshal(r.Data.Raw, &v); err != nil {
		return append(errs, field.Invalid(controllerRevisionDataPath, "<value omitted>", fmt.Sprintf("error parsing data: %v", err.Error())))
	}
	if v == nil {
		return append(errs, field.Required(controllerRevisionDataPath, "data is mandatory"))
	}
	if _, ok := v.(map[string]any); !ok {
		errs = append(errs, field.Required(controllerRevisionDataPath, "data must be a valid JSON object"))
	}
	return errs
}

// validateControllerRevisionUpdate is kube's ValidateControllerRevisionUpdate:
// data is immutable (the revision number is not, despite kube's comment).
// The bad value renders as the raw JSON, as kube's RawExtension does.
func validateControllerRevisionUpdate(r, old *appsv1.ControllerRevision) field.ErrorList {
	errs := objectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, metadataPath)
	errs = append(errs, validateControllerRevision(r)...)
	return append(errs, apimachineryvalidation.ValidateImmutableField(r.Data, old.Data, controllerRevisionDataPath)...)
}
