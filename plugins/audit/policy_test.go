package audit

import (
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/request"
)

const testPolicy = `
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: [system:kube-proxy]
- level: None
  nonResourceURLs: ["/healthz*", /version]
- level: Request
  userGroups: [auditors]
  verbs: [get]
- level: RequestResponse
  resources:
  - group: ""
    resources: [pods/log, "*/status"]
- level: Metadata
  resources:
  - group: apps
    resources: ["deployments/*"]
  - group: ""
    resources: [configmaps]
    resourceNames: [special]
  omitStages: [ResponseComplete]
- level: Request
  namespaces: [team-a]
- level: Metadata
  nonResourceURLs: ["*"]
`

func TestPolicyEvaluate(t *testing.T) {
	p, warn, err := ParsePolicy([]byte(testPolicy))
	if err != nil || warn != nil {
		t.Fatal(err, warn)
	}
	alice := &request.User{Name: "alice", Groups: []string{"devs"}}
	res := func(u *request.User, verb, ns, group, resource, sub, name string) *auth.Attributes {
		return &auth.Attributes{User: u, Verb: verb, Namespace: ns, APIGroup: group, Resource: resource, Subresource: sub, Name: name, ResourceRequest: true}
	}
	tests := []struct {
		name  string
		a     *auth.Attributes
		want  Level
		omits []EventStage
	}{
		{"user", res(&request.User{Name: "system:kube-proxy"}, "list", "", "", "pods", "", ""), LevelNone, nil},
		{"url prefix", &auth.Attributes{User: alice, Verb: "get", Path: "/healthz/etcd"}, LevelNone, nil},
		{"url exact", &auth.Attributes{User: alice, Verb: "get", Path: "/version"}, LevelNone, nil},
		{"url other", &auth.Attributes{User: alice, Verb: "get", Path: "/metrics"}, LevelMetadata, nil},
		{"group and verb", res(&request.User{Name: "bob", Groups: []string{"auditors"}}, "get", "x", "", "secrets", "", "s"), LevelRequest, nil},
		{"group, other verb", res(&request.User{Name: "bob", Groups: []string{"auditors"}}, "list", "x", "", "secrets", "", ""), LevelNone, nil},
		{"no user never matches a group", res(nil, "get", "x", "", "secrets", "", "s"), LevelNone, nil},
		{"subresource", res(alice, "get", "x", "", "pods", "log", "p"), LevelRequestResponse, nil},
		{"resource is not its subresource", res(alice, "get", "x", "", "pods", "", "p"), LevelNone, nil},
		{"star slash subresource", res(alice, "update", "x", "", "services", "status", "s"), LevelRequestResponse, nil},
		{"resource slash star", res(alice, "patch", "x", "apps", "deployments", "scale", "d"), LevelMetadata, []EventStage{StageResponseComplete, StageRequestReceived}},
		// As kube: "deployments/*" covers deployments itself too.
		{"resource slash star covers the resource", res(alice, "patch", "x", "apps", "deployments", "", "d"), LevelMetadata, []EventStage{StageResponseComplete, StageRequestReceived}},
		{"resourceNames", res(alice, "get", "x", "", "configmaps", "", "special"), LevelMetadata, []EventStage{StageResponseComplete, StageRequestReceived}},
		{"resourceNames other", res(alice, "get", "x", "", "configmaps", "", "plain"), LevelNone, nil},
		{"namespace", res(alice, "delete", "team-a", "", "configmaps", "", "plain"), LevelRequest, nil},
		{"cluster scope is not a namespace", res(alice, "delete", "", "", "nodes", "", "n"), LevelNone, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := p.Evaluate(tt.a)
			if d.level != tt.want {
				t.Fatalf("level = %s, want %s", d.level, tt.want)
			}
			if tt.want != LevelNone && tt.omits == nil {
				tt.omits = []EventStage{StageRequestReceived}
			}
			if tt.want != LevelNone && strings.Join(stages(d.omitStages), ",") != strings.Join(stages(tt.omits), ",") {
				t.Errorf("omitStages = %v, want %v", d.omitStages, tt.omits)
			}
		})
	}
}

func stages(s []EventStage) []string {
	var out []string
	for _, x := range s {
		out = append(out, string(x))
	}
	return out
}

func TestParsePolicyErrors(t *testing.T) {
	tests := []struct {
		name, policy, want string
	}{
		{"wrong version", "apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: None}]", "unknown group version"},
		{"no rules", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []", "loaded illegal policy with 0 rules"},
		{"bad level", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Everything}]", `rules[0].level: Unsupported value: "Everything"`},
		{"missing level", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{verbs: [get]}]", "rules[0].level: Required value"},
		{"bad stage", "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Whenever]\nrules: [{level: None}]", "omitStages[0]: Invalid value"},
		{"url without slash", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: [healthz]}]", "must begin with a '/' character"},
		{"url star inside", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: [/a*/b]}]", "must be the final character"},
		{"urls and resources", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: [/a], namespaces: [x]}]", "both regular resources and non-resource URLs"},
		{"names without resources", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, resources: [{group: '', resourceNames: [x]}]}]", "requires at least one resource"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ParsePolicy([]byte(tt.policy))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	t.Run("unknown field is lenient with a warning", func(t *testing.T) {
		p, warn, err := ParsePolicy([]byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, colour: red}]"))
		if err != nil || warn == nil || len(p.Rules) != 1 {
			t.Fatalf("p %v warn %v err %v", p, warn, err)
		}
	})
}

func TestConfigValidate(t *testing.T) {
	good := map[string]any{"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": []any{map[string]any{"level": "Metadata"}}}
	tests := []struct {
		name string
		cfg  Config
		key  string
	}{
		{"off", Config{}, ""},
		{"inline", Config{Policy: good, LogPath: "-"}, ""},
		{"both", Config{Policy: good, PolicyFile: "/x", LogPath: "-"}, "policy"},
		{"missing file", Config{PolicyFile: "/does/not/exist", LogPath: "-"}, "policyFile"},
		{"no log path", Config{Policy: good}, "logPath"},
		{"bad inline", Config{Policy: map[string]any{"kind": "Policy"}, LogPath: "-"}, "policy"},
		{"negative", Config{Policy: good, LogPath: "-", MaxAge: -1}, "maxAge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.key == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.key+":") {
				t.Fatalf("err = %v, want one for %s", err, tt.key)
			}
		})
	}
}
