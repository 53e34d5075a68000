package validation

import (
	"fmt"
	"strings"

	schedulingv1 "k8s.io/api/scheduling/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(false, validatePriorityClass, validatePriorityClassUpdate, nil)
}

const (
	// highestUserDefinablePriority leaves higher values to system classes.
	highestUserDefinablePriority = int32(1000000000)
	systemCriticalPriority       = 2 * highestUserDefinablePriority
	systemPriorityClassPrefix    = "system-"
)

// systemPriorityClasses are the classes kube creates at bootstrap; only they
// may use the system- prefix, with exactly these values.
var systemPriorityClasses = []struct {
	name  string
	value int32
}{
	{systemPriorityClassPrefix + "node-critical", systemCriticalPriority + 1000},
	{systemPriorityClassPrefix + "cluster-critical", systemCriticalPriority},
}

func knownSystemPriorityClass(name string, value int32, globalDefault bool) error {
	for _, c := range systemPriorityClasses {
		if c.name != name {
			continue
		}
		if c.value != value {
			return fmt.Errorf("value of %v PriorityClass must be %v", c.name, c.value)
		}
		if globalDefault {
			return fmt.Errorf("globalDefault of %v PriorityClass must be %v", c.name, false)
		}
		return nil
	}
	return fmt.Errorf("%v is not a known system priority class", name)
}

func validatePriorityClass(pc *schedulingv1.PriorityClass) field.ErrorList {
	errs := objectMeta(&pc.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	if strings.HasPrefix(pc.Name, systemPriorityClassPrefix) {
		if err := knownSystemPriorityClass(pc.Name, pc.Value, pc.GlobalDefault); err != nil {
			errs = append(errs, field.Forbidden(metadataPath.Child("name"), "priority class names with '"+systemPriorityClassPrefix+"' prefix are reserved for system use only. error: "+err.Error()))
		}
	} else if pc.Value > highestUserDefinablePriority {
		errs = append(errs, field.Forbidden(field.NewPath("value"), fmt.Sprintf("maximum allowed value of a user defined priority is %v", highestUserDefinablePriority)))
	}
	if pc.PreemptionPolicy != nil {
		errs = append(errs, validatePreemptionPolicy(pc.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
	}
	return errs
}

func validatePriorityClassUpdate(pc, old *schedulingv1.PriorityClass) field.ErrorList {
	errs := objectMetaUpdate(&pc.ObjectMeta, &old.ObjectMeta, metadataPath)
	if pc.Value != old.Value {
		errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
	}
	return append(errs, apimachineryvalidation.ValidateImmutableField(pc.PreemptionPolicy, old.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
}
