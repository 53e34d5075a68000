package cel

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/cel-go/common/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

func policySpec(validations ...string) *admissionregistrationv1.ValidatingAdmissionPolicySpec {
	s := &admissionregistrationv1.ValidatingAdmissionPolicySpec{}
	for _, v := range validations {
		s.Validations = append(s.Validations, admissionregistrationv1.Validation{Expression: v})
	}
	return s
}

func deployment(replicas int64) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "demo", "labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"replicas": replicas},
	}
}

func request() map[string]any {
	return map[string]any{
		"operation": "CREATE", "name": "web", "namespace": "demo",
		"kind":     map[string]any{"group": "apps", "version": "v1", "kind": "Deployment"},
		"userInfo": map[string]any{"username": "alice", "groups": []any{"devs"}},
	}
}

func TestEvaluate(t *testing.T) {
	for _, tc := range []struct {
		name, expr string
		params     map[string]any
		hasParams  bool
		ns         map[string]any
		vars       []admissionregistrationv1.Variable
		want       any
		wantErr    string
	}{
		{name: "replicas", expr: "object.spec.replicas <= 5", want: false},
		{name: "request", expr: "request.operation == 'CREATE' && request.userInfo.username == 'alice' && 'devs' in request.userInfo.groups", want: true},
		{name: "has", expr: "has(object.spec.template)", want: false},
		{name: "oldObject null on create", expr: "oldObject == null", want: true},
		{name: "params", expr: "object.spec.replicas <= int(params.data.max)", hasParams: true,
			params: map[string]any{"data": map[string]any{"max": "7"}}, want: true},
		{name: "null params", expr: "params == null", hasParams: true, want: true},
		{name: "namespaceObject", expr: "namespaceObject.metadata.labels['env'] == 'prod'",
			ns: map[string]any{"metadata": map[string]any{"name": "demo", "labels": map[string]any{"env": "prod"}}}, want: true},
		{name: "variables", expr: "variables.big && variables.name.startsWith('we')",
			vars: []admissionregistrationv1.Variable{{Name: "big", Expression: "object.spec.replicas > 3"}, {Name: "name", Expression: "object.metadata.name"}}, want: true},
		{name: "variable uses variable", expr: "variables.twice == 8",
			vars: []admissionregistrationv1.Variable{{Name: "r", Expression: "object.spec.replicas"}, {Name: "twice", Expression: "variables.r * 2"}}, want: true},
		{name: "strings ext", expr: "object.metadata.name.upperAscii() == 'WEB' && 'a,b'.split(',').size() == 2", want: true},
		{name: "sets ext", expr: "sets.contains([1,2,3], [2])", want: true},
		{name: "regex find", expr: "'abc123'.find('[0-9]+') == '123' && 'a1b2'.findAll('[0-9]').size() == 2", want: true},
		{name: "lists", expr: "[3,1,2].max() == 3 && [1,2,3].isSorted() && [1,2].sum() == 3 && [1,2,1].lastIndexOf(1) == 2", want: true},
		{name: "quantity", expr: "quantity('1Gi').isGreaterThan(quantity('512Mi')) && quantity('1').add(2).asInteger() == 3 && isQuantity('100m') && !isQuantity('x') && sign(quantity('-1')) == -1 && quantity('1.5').asApproximateFloat() == 1.5 && quantity('1k') == quantity('1000')", want: true},
		{name: "ip and cidr", expr: "ip('10.0.0.1').family() == 4 && cidr('10.0.0.0/8').containsIP('10.1.2.3') && cidr('10.0.0.0/8').containsIP(ip('10.1.2.3')) && !cidr('10.0.0.0/8').containsCIDR('0.0.0.0/0') && cidr('10.1.0.0/16').prefixLength() == 16 && string(cidr('10.1.2.3/16').masked()) == '10.1.0.0/16' && isIP('::1') && !isIP('x') && ip.isCanonical('10.0.0.1') && ip('127.0.0.1').isLoopback() && isCIDR('::/0') && string(ip('::1')) == '::1' && cidr('10.0.0.0/8').ip() == ip('10.0.0.0')", want: true},
		{name: "url", expr: "url('https://example.com:8080/a%20b?x=1&x=2').getHostname() == 'example.com' && url('https://example.com:8080/p').getPort() == '8080' && url('https://e.com/?x=1&x=2').getQuery()['x'] == ['1', '2'] && isURL('https://e.com') && !isURL('nope') && url('http://h/a%20b').getEscapedPath() == '/a%20b' && url('http://h:1').getScheme() == 'http' && url('http://h:1').getHost() == 'h:1'", want: true},
		{name: "format", expr: "!format.dns1123Label().validate(object.metadata.name).hasValue() && format.dns1123Label().validate('Not_OK').hasValue() && format.named('uuid').value().validate('x').value() == ['does not match the UUID format'] && !format.named('nope').hasValue()", want: true},
		{name: "semver", expr: "semver('1.2.3').isLessThan(semver('1.10.0')) && semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1')) && semver('1.0.0-beta.11').isGreaterThan(semver('1.0.0-beta.2')) && semver('1.0.0').compareTo(semver('1.0.0+build')) == 0 && semver('1.0.0-rc.1').isLessThan(semver('1.0.0')) && semver('v01.2', true).minor() == 2 && semver('v01.2', true).major() == 1 && !isSemver('1.2') && isSemver('v1.2', true) && !isSemver('01.2.3')", want: true},
		{name: "optional", expr: "object.?spec.?paused.orValue(false) == false", want: true},
		{name: "runtime error", expr: "object.spec.missing > 1", wantErr: "expression 'object.spec.missing > 1' resulted in error: no such key: missing"},
		{name: "cost limit", expr: "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, true))))))",
			wantErr: "actual cost limit exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := policySpec(tc.expr)
			s.Variables = tc.vars
			c := Compile(s, Options{HasParams: tc.hasParams})
			for _, v := range c.Variables {
				if v.Err != nil {
					t.Fatalf("variable %s: %v", v.Name, v.Err)
				}
			}
			if c.Validations[0].Err != nil {
				t.Fatalf("compile: %v", c.Validations[0].Err)
			}
			e := c.NewEvaluation(context.Background(), Input{Object: deployment(4 + map[bool]int64{true: 2}[tc.name == "replicas"]), Request: request(), Params: tc.params, Namespace: tc.ns})
			got, err := e.Eval(&c.Validations[0])
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, %v; want error %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Value() != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, expr string
		hasParams  bool
		want       string
	}{
		{name: "syntax", expr: "object.spec.replicas >", want: "compilation failed: ERROR: <input>:1:23: Syntax error"},
		{name: "not bool", expr: "object.spec.replicas", want: "must evaluate to bool but got dyn"},
		{name: "int not bool", expr: "1 + 2", want: "must evaluate to bool but got int"},
		{name: "params undeclared without paramKind", expr: "params.x == 1", want: "undeclared reference to 'params'"},
		{name: "request field", expr: "request.nope == 'x'", want: "undefined field 'nope'"},
		{name: "bad regex literal", expr: "'a'.matches('[')", want: "compilation failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compile(policySpec(tc.expr), Options{HasParams: tc.hasParams})
			err := c.Validations[0].Err
			if err == nil || err.Type != ErrorInvalid || !strings.Contains(err.Detail, tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	s := policySpec("true")
	s.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "k", ValueExpression: "1"}}
	s.Validations[0].MessageExpression = "1"
	c := Compile(s, Options{})
	if err := c.AuditAnnotations[0].Err; err == nil || err.Detail != "must evaluate to one of [string null_type] but got int" {
		t.Errorf("audit annotation: %v", err)
	}
	if err := c.Messages[0].Err; err == nil || err.Detail != "must evaluate to string but got int" {
		t.Errorf("message: %v", err)
	}
}

func TestTypedObject(t *testing.T) {
	s := policySpec("object.spec.replicas > 1")
	if err := CheckExpression(s, Options{ObjectModel: "io.k8s.api.apps.v1.Deployment"}, "object.spec.replicas > 1"); err != nil {
		t.Fatalf("well-typed: %v", err)
	}
	err := CheckExpression(s, Options{ObjectModel: "io.k8s.api.apps.v1.Deployment"}, "object.spec.replicas == 'x'")
	if err == nil || !strings.Contains(err.Detail, "found no matching overload for '_==_' applied to '(int, string)'") {
		t.Fatalf("type error: %v", err)
	}
	err = CheckExpression(s, Options{ObjectModel: "io.k8s.api.apps.v1.Deployment"}, "object.spec.replicaz > 1")
	if err == nil || !strings.Contains(err.Detail, "undefined field 'replicaz'") {
		t.Fatalf("undefined field: %v", err)
	}
	for _, ok := range []string{
		"object.metadata.labels['a'] == 'b'",
		"object.spec.template.spec.containers.all(c, c.image.startsWith('r/'))",
		"object.spec.strategy.rollingUpdate.maxSurge == 1",
		"object.spec.template.spec.containers[0].resources.limits['cpu'] == '1'",
		"object.metadata.creationTimestamp < timestamp('2030-01-01T00:00:00Z')",
	} {
		if err := CheckExpression(s, Options{ObjectModel: "io.k8s.api.apps.v1.Deployment"}, ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	if err := CheckExpression(s, Options{HasParams: true, ParamsModel: "io.k8s.api.core.v1.ConfigMap"}, "params.data['x'] == 'y'"); err != nil {
		t.Errorf("params: %v", err)
	}
	if err := CheckExpression(s, Options{HasParams: true, ParamsModel: "io.k8s.api.core.v1.ConfigMap"}, "params.spec.x == 'y'"); err == nil {
		t.Errorf("params.spec should not check")
	}
}

func TestBudget(t *testing.T) {
	c := Compile(policySpec("[1,2,3].all(x, x > 0)"), Options{})
	e := c.NewEvaluation(context.Background(), Input{Object: deployment(1), Request: request()})
	e.Budget = 1
	_, err := e.Eval(&c.Validations[0])
	if !errors.Is(err, ErrOutOfBudget) {
		t.Fatalf("got %v", err)
	}
	_ = types.NullValue
}

type fakeAuthz struct{ checks []AuthzCheck }

func (f *fakeAuthz) Authorize(_ context.Context, c AuthzCheck) (bool, string, error) {
	f.checks = append(f.checks, c)
	if c.Path == "/healthz" {
		return true, "", nil
	}
	if c.User.Name == "system:serviceaccount:ns:robot" {
		return false, "robots may not", nil
	}
	return c.ResourceRequest && c.Verb == "get" && c.Resource == "pods", "rbac says so", nil
}

func TestAuthorizer(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want bool
	}{
		{"authorizer.group('').resource('pods').namespace('ns').name('p').check('get').allowed()", true},
		{"authorizer.group('').resource('pods').check('delete').allowed()", false},
		{"authorizer.group('').resource('pods').check('get').reason() == 'rbac says so'", true},
		{"authorizer.path('/healthz').check('get').allowed() && !authorizer.path('/healthz').check('get').errored()", true},
		{"authorizer.serviceAccount('ns', 'robot').group('').resource('pods').check('get').reason() == 'robots may not'", true},
		{"authorizer.requestResource.check('get').allowed()", true},
		{"authorizer.requestResource.subresource('status').check('update').allowed()", false},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			c := Compile(policySpec(tc.expr), Options{})
			if err := c.Validations[0].Err; err != nil {
				t.Fatal(err)
			}
			f := &fakeAuthz{}
			u := AuthzUser{Name: "alice"}
			in := Input{Object: deployment(1), Request: request(),
				Authorizer:      NewAuthorizer(context.Background(), f, u),
				RequestResource: NewRequestResourceAuthorizer(context.Background(), f, u, "", "pods", "", "ns", "p")}
			got, err := c.NewEvaluation(context.Background(), in).Eval(&c.Validations[0])
			if err != nil {
				t.Fatal(err)
			}
			if got != types.Bool(tc.want) {
				t.Fatalf("got %v, want %v (checks %+v)", got, tc.want, f.checks)
			}
		})
	}
}

// BenchmarkCompile is the cost of compiling a policy of three validations
// and a variable (once per policy generation).
func BenchmarkCompile(b *testing.B) {
	s := policySpec("variables.big", "object.spec.replicas <= 5", "request.operation == 'CREATE'")
	s.Variables = []admissionregistrationv1.Variable{{Name: "big", Expression: "object.spec.replicas > 3"}}
	for i := 0; i < b.N; i++ {
		Compile(s, Options{})
	}
}

// BenchmarkEvaluate is the cost of evaluating one validation.
func BenchmarkEvaluate(b *testing.B) {
	c := Compile(policySpec("object.spec.replicas <= 5 && request.userInfo.username != ''"), Options{})
	in := Input{Object: deployment(3), Request: request()}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := c.NewEvaluation(context.Background(), in).Eval(&c.Validations[0]); err != nil {
			b.Fatal(err)
		}
	}
}

func TestCheckMatchCondition(t *testing.T) {
	if err := CheckMatchCondition("request.operation == 'CREATE' && authorizer.path('/x').check('get').allowed()", false, NewExpressions); err != nil {
		t.Fatal(err)
	}
	for src, want := range map[string]string{
		"variables.x":          "undeclared reference to 'variables'",
		"params.x == 1":        "undeclared reference to 'params'",
		"object.metadata.name": "must evaluate to bool but got dyn",
	} {
		if err := CheckMatchCondition(src, false, NewExpressions); err == nil || !strings.Contains(err.Detail, want) {
			t.Errorf("%s: got %v, want %q", src, err, want)
		}
	}
	if err := CheckMatchCondition("params.x == 1", true, NewExpressions); err != nil {
		t.Errorf("with params: %v", err)
	}
}

// TestStoredExpressions: kube 1.37's lists library `includes` compiles only
// as a stored expression (its NewExpressions environment is 1.36's).
func TestStoredExpressions(t *testing.T) {
	const src = "[1, 2].includes(2) && !['a'].includes('b') && 'x'.includes('x')"
	err := CheckMatchCondition(src, false, NewExpressions)
	if err == nil || !strings.Contains(err.Detail, "undeclared reference to 'includes'") {
		t.Fatalf("new expression: got %v", err)
	}
	c := CompileMatchConditions([]string{src})
	if x := c.MatchConditions[0]; x.Err != nil {
		t.Fatalf("stored expression: %v", x.Err)
	}
	ok, err2 := c.Match(context.Background(), Input{Request: request()}, MatchConditionsBudget)
	if !ok || err2 != nil {
		t.Fatalf("got %v, %v", ok, err2)
	}
}
