// Package validatingadmissionpolicy is kube's ValidatingAdmissionPolicy
// admission plugin: ValidatingAdmissionPolicies and their bindings, read
// through watch-fed informers (and, beyond kube, declared inline in the
// plugin's config), are matched against each write and their CEL
// validations decide it with the bindings' validation actions (Deny, Warn,
// Audit). The typechecking controller reports type errors in each
// policy's status.
package validatingadmissionpolicy

import (
	"bytes"
	"encoding/json"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/api/defaults"
	"github.com/kpipe/kpipe/internal/api/validation"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the plugin's name in the validating-admission list.
const Name = "ValidatingAdmissionPolicy"

// Config is the plugin's config block. Policies and Bindings are
// ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding objects
// written in YAML (apiVersion and kind may be left out); they act as
// stored ones do, beside them.
type Config struct {
	Policies []map[string]any `koanf:"policies"`
	Bindings []map[string]any `koanf:"bindings"`
}

// Validate implements pipeline.Validator: every inline object decodes
// strictly, and is valid as kube's validation would find it on create.
func (c *Config) Validate() error {
	_, _, err := c.decode()
	return err
}

func (c *Config) decode() ([]*admissionregistrationv1.ValidatingAdmissionPolicy, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding, error) {
	var policies []*admissionregistrationv1.ValidatingAdmissionPolicy
	var bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	seen := map[string]bool{}
	for i, m := range c.Policies {
		p := &admissionregistrationv1.ValidatingAdmissionPolicy{}
		if err := decodeInline(m, "ValidatingAdmissionPolicy", p); err != nil {
			return nil, nil, fieldError(fmt.Sprintf("policies[%d]", i), err.Error())
		}
		if err := valid(p); err != nil {
			return nil, nil, fieldError(fmt.Sprintf("policies[%d]", i), fmt.Sprintf("ValidatingAdmissionPolicy %q is invalid: %v", p.Name, err))
		}
		if seen[p.Name] {
			return nil, nil, fieldError(fmt.Sprintf("policies[%d].metadata.name", i), fmt.Sprintf("duplicate name %q", p.Name))
		}
		seen[p.Name] = true
		p.Generation = 1
		p.UID = types.UID("inline-policy-" + p.ObjectMeta.Name)
		policies = append(policies, p)
	}
	seen = map[string]bool{}
	for i, m := range c.Bindings {
		b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		if err := decodeInline(m, "ValidatingAdmissionPolicyBinding", b); err != nil {
			return nil, nil, fieldError(fmt.Sprintf("bindings[%d]", i), err.Error())
		}
		if err := valid(b); err != nil {
			return nil, nil, fieldError(fmt.Sprintf("bindings[%d]", i), fmt.Sprintf("ValidatingAdmissionPolicyBinding %q is invalid: %v", b.Name, err))
		}
		if seen[b.Name] {
			return nil, nil, fieldError(fmt.Sprintf("bindings[%d].metadata.name", i), fmt.Sprintf("duplicate name %q", b.Name))
		}
		seen[b.Name] = true
		bindings = append(bindings, b)
	}
	return policies, bindings, nil
}

func fieldError(key, msg string) error { return &config.FieldError{Key: key, Msg: msg} }

// decodeInline decodes one object strictly: an unknown field is an error.
func decodeInline(m map[string]any, kind string, out runtime.Object) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	var tm struct{ APIVersion, Kind string }
	_ = json.Unmarshal(raw, &tm)
	if tm.APIVersion != "" && tm.APIVersion != admissionregistrationv1.SchemeGroupVersion.String() {
		return fmt.Errorf("apiVersion must be %s, not %q", admissionregistrationv1.SchemeGroupVersion, tm.APIVersion)
	}
	if tm.Kind != "" && tm.Kind != kind {
		return fmt.Errorf("kind must be %s, not %q", kind, tm.Kind)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	return d.Decode(out)
}

func valid(obj runtime.Object) error {
	defaults.Apply(obj)
	if errs := validation.ValidateCreate(obj); len(errs) > 0 {
		return errs.ToAggregate()
	}
	return nil
}

// Register adds the plugin to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindValidatingAdmission,
		Description: "validates writes with ValidatingAdmissionPolicies' CEL expressions, stored or declared inline.",
		Config:      func() any { return &Config{} },
		New: func(c any) (any, error) {
			policies, bindings, err := c.(*Config).decode()
			if err != nil {
				return nil, err
			}
			return &Plugin{inlinePolicies: policies, inlineBindings: bindings}, nil
		},
	})
}
