package audit

import (
	"fmt"
	"slices"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/internal/auth"
)

// ParsePolicy reads an audit.k8s.io/v1 Policy in YAML or JSON and checks
// it as kube does. An unknown field is decoded leniently, as kube falls
// back to, and reported in warning.
func ParsePolicy(data []byte) (p *Policy, warning error, err error) {
	p = &Policy{}
	if strictErr := yaml.UnmarshalStrict(data, p); strictErr != nil {
		p = &Policy{}
		if err := yaml.Unmarshal(data, p); err != nil {
			return nil, nil, fmt.Errorf("failed decoding: %w", err)
		}
		warning = fmt.Errorf("audit policy contains errors, falling back to lenient decoding: %w", strictErr)
	}
	if p.APIVersion != GroupVersion || p.Kind != "Policy" {
		return nil, nil, fmt.Errorf("unknown group version field %s, Kind=%s in policy: want apiVersion %s, kind Policy", p.APIVersion, p.Kind, GroupVersion)
	}
	if errs := validatePolicy(p); len(errs) > 0 {
		return nil, nil, errs.ToAggregate()
	}
	if len(p.Rules) == 0 {
		return nil, nil, fmt.Errorf("loaded illegal policy with 0 rules")
	}
	// A rule omits the policy's stages too.
	for i := range p.Rules {
		for _, s := range p.OmitStages {
			if !slices.Contains(p.Rules[i].OmitStages, s) {
				p.Rules[i].OmitStages = append(p.Rules[i].OmitStages, s)
			}
		}
	}
	return p, warning, nil
}

var allStages = []string{string(StageRequestReceived), string(StageResponseStarted), string(StageResponseComplete), string(StagePanic)}

func validatePolicy(p *Policy) field.ErrorList {
	errs := validateStages(p.OmitStages, field.NewPath("omitStages"))
	for i, r := range p.Rules {
		path := field.NewPath("rules").Index(i)
		switch r.Level {
		case LevelNone, LevelMetadata, LevelRequest, LevelRequestResponse:
		case "":
			errs = append(errs, field.Required(path.Child("level"), ""))
		default:
			errs = append(errs, field.NotSupported(path.Child("level"), r.Level,
				[]string{string(LevelNone), string(LevelMetadata), string(LevelRequest), string(LevelRequestResponse)}))
		}
		for j, u := range r.NonResourceURLs {
			if u == "*" {
				continue
			}
			if !strings.HasPrefix(u, "/") {
				errs = append(errs, field.Invalid(path.Child("nonResourceURLs").Index(j), u, "non-resource URL rules must begin with a '/' character"))
			}
			if u != "" && strings.ContainsRune(u[:len(u)-1], '*') {
				errs = append(errs, field.Invalid(path.Child("nonResourceURLs").Index(j), u, "non-resource URL wildcards '*' must be the final character of the rule"))
			}
		}
		for _, gr := range r.Resources {
			if gr.Group != "" && gr.Group != "*" {
				if msgs := apivalidation.NameIsDNSSubdomain(gr.Group, false); len(msgs) > 0 {
					errs = append(errs, field.Invalid(path.Child("resources").Child("group"), gr.Group, strings.Join(msgs, ",")))
				}
			}
			if len(gr.ResourceNames) > 0 && len(gr.Resources) == 0 {
				errs = append(errs, field.Invalid(path.Child("resources").Child("resourceNames"), gr.ResourceNames, "using resourceNames requires at least one resource"))
			}
		}
		errs = append(errs, validateStages(r.OmitStages, path.Child("omitStages"))...)
		if len(r.NonResourceURLs) > 0 && (len(r.Resources) > 0 || len(r.Namespaces) > 0) {
			errs = append(errs, field.Invalid(path.Child("nonResourceURLs"), r.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
	}
	return errs
}

func validateStages(stages []EventStage, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, s := range stages {
		if !slices.Contains(allStages, string(s)) {
			errs = append(errs, field.Invalid(path.Index(i), string(s), "allowed stages are "+strings.Join(allStages, ",")))
		}
	}
	return errs
}

// decision is what the policy says of one request.
type decision struct {
	level             Level
	omitStages        []EventStage
	omitManagedFields bool
}

// Evaluate returns the level of the first matching rule; None when no
// rule matches.
func (p *Policy) Evaluate(a *auth.Attributes) decision {
	for i := range p.Rules {
		r := &p.Rules[i]
		if ruleMatches(r, a) {
			d := decision{level: r.Level, omitStages: r.OmitStages, omitManagedFields: p.OmitManagedFields}
			if r.OmitManagedFields != nil {
				d.omitManagedFields = *r.OmitManagedFields
			}
			return d
		}
	}
	return decision{level: LevelNone, omitStages: p.OmitStages, omitManagedFields: p.OmitManagedFields}
}

func ruleMatches(r *PolicyRule, a *auth.Attributes) bool {
	u := a.User
	if len(r.Users) > 0 && (u == nil || !slices.Contains(r.Users, u.Name)) {
		return false
	}
	if len(r.UserGroups) > 0 {
		if u == nil || !slices.ContainsFunc(u.Groups, func(g string) bool { return slices.Contains(r.UserGroups, g) }) {
			return false
		}
	}
	if len(r.Verbs) > 0 && !slices.Contains(r.Verbs, a.Verb) {
		return false
	}
	if len(r.Namespaces) > 0 || len(r.Resources) > 0 {
		return resourceMatches(r, a)
	}
	if len(r.NonResourceURLs) > 0 {
		if a.ResourceRequest {
			return false
		}
		return slices.ContainsFunc(r.NonResourceURLs, func(spec string) bool { return pathMatches(a.Path, spec) })
	}
	return true
}

func pathMatches(path, spec string) bool {
	return spec == "*" || spec == path ||
		(strings.HasSuffix(spec, "*") && strings.HasPrefix(path, strings.TrimRight(spec, "*")))
}

func resourceMatches(r *PolicyRule, a *auth.Attributes) bool {
	if !a.ResourceRequest {
		return false
	}
	// Cluster-scoped resources have the namespace "".
	if len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, a.Namespace) {
		return false
	}
	if len(r.Resources) == 0 {
		return true
	}
	combined := a.Resource
	if a.Subresource != "" {
		combined += "/" + a.Subresource
	}
	for _, gr := range r.Resources {
		if gr.Group != a.APIGroup && gr.Group != "*" {
			continue
		}
		if len(gr.Resources) == 0 {
			return true
		}
		if len(gr.ResourceNames) > 0 && !slices.Contains(gr.ResourceNames, a.Name) {
			continue
		}
		for _, res := range gr.Resources {
			switch {
			case res == combined, res == "*":
				return true
			case a.Subresource != "" && strings.HasPrefix(res, "*/") && a.Subresource == res[2:]:
				return true
			case strings.HasSuffix(res, "/*") && a.Resource == strings.TrimSuffix(res, "/*"):
				return true
			}
		}
	}
	return false
}
