package validatingadmissionpolicy

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/pipeline/pipelinetest"
)

func parse(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const goodPolicy = `
- metadata: {name: p}
  spec:
    matchConstraints:
      resourceRules:
      - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
    validations:
    - expression: object.spec.replicas <= 5
`

func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		key, msg   string
	}{
		{name: "empty", yaml: `{}`},
		{name: "policy and binding", yaml: "policies:" + goodPolicy + `
bindings:
- metadata: {name: b}
  spec: {policyName: p, validationActions: [Deny]}
`},
		{name: "compile error names the key", yaml: `
policies:
- metadata: {name: p}
  spec:
    matchConstraints:
      resourceRules:
      - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
    validations:
    - expression: object.spec.replicas <=
`, key: "pipeline[0] (ValidatingAdmissionPolicy).config.policies[0]", msg: `ValidatingAdmissionPolicy "p" is invalid: spec.validations[0].expression: Invalid value: "object.spec.replicas <=": compilation failed: ERROR: <input>:1:24: Syntax error`},
		{name: "unknown field", yaml: `
policies:
- metadata: {name: p}
  spec: {validashuns: []}
`, key: "pipeline[0] (ValidatingAdmissionPolicy).config.policies[0]", msg: `unknown field "validashuns"`},
		{name: "wrong kind", yaml: `
bindings:
- kind: ValidatingAdmissionPolicy
  metadata: {name: b}
`, key: "pipeline[0] (ValidatingAdmissionPolicy).config.bindings[0]", msg: "kind must be ValidatingAdmissionPolicyBinding"},
		{name: "binding without actions", yaml: `
bindings:
- metadata: {name: b}
  spec: {policyName: p}
`, key: "pipeline[0] (ValidatingAdmissionPolicy).config.bindings[0]", msg: "spec.validationActions: Required value"},
		{name: "duplicate", yaml: "policies:" + goodPolicy + goodPolicy, key: "pipeline[0] (ValidatingAdmissionPolicy).config.policies[1].metadata.name", msg: `duplicate name "p"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pipelinetest.Build(t, Register, pipeline.KindValidatingAdmission, Name, parse(t, tc.yaml))
			if tc.key == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			pipelinetest.WantFieldError(t, err, tc.key)
			fe := err.(*config.FieldError)
			if !strings.Contains(fe.Msg, tc.msg) {
				t.Errorf("message %q lacks %q", fe.Msg, tc.msg)
			}
		})
	}
}
