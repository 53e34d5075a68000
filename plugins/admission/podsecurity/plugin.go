// Package podsecurity is kube's PodSecurity admission plugin: the Pod
// Security Standards (privileged, baseline, restricted) enforced, audited
// and warned about per namespace, from the namespace's
// pod-security.kubernetes.io labels, with defaults and exemptions from
// config. The checks are k8s.io/pod-security-admission's policy package;
// the admission glue around them is written here, after kube's.
package podsecurity

import (
	"fmt"
	"strings"

	machinery "k8s.io/apimachinery/pkg/api/validation"
	psaapi "k8s.io/pod-security-admission/api"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the plugin's name in the validating-admission list.
const Name = "PodSecurity"

// Config is the plugin's config block, in the shape of kube's
// PodSecurityConfiguration (pod-security.admission.config.k8s.io/v1).
type Config struct {
	// Defaults apply to namespaces without the matching label.
	Defaults Defaults `koanf:"defaults"`
	// Exemptions skip evaluation.
	Exemptions Exemptions `koanf:"exemptions"`

	policy psaapi.Policy // parsed at Validate
}

// Defaults are the levels ("privileged", "baseline", "restricted") and
// versions ("latest", "v1.x") a namespace gets when it does not set the
// label. Empty means privileged and latest, as kube's defaulting.
type Defaults struct {
	Enforce        string `koanf:"enforce"`
	EnforceVersion string `koanf:"enforce-version"`
	Audit          string `koanf:"audit"`
	AuditVersion   string `koanf:"audit-version"`
	Warn           string `koanf:"warn"`
	WarnVersion    string `koanf:"warn-version"`
}

// Exemptions are requests the plugin lets through unevaluated.
type Exemptions struct {
	// Usernames are authenticated users whose requests are exempt.
	Usernames []string `koanf:"usernames"`
	// Namespaces are namespaces whose pods and controllers are exempt.
	Namespaces []string `koanf:"namespaces"`
	// RuntimeClasses are runtimeClassNames whose pods are exempt.
	RuntimeClasses []string `koanf:"runtimeClasses"`
}

func newConfig() *Config {
	return &Config{Defaults: Defaults{
		Enforce: string(psaapi.LevelPrivileged), EnforceVersion: psaapi.VersionLatest,
		Audit: string(psaapi.LevelPrivileged), AuditVersion: psaapi.VersionLatest,
		Warn: string(psaapi.LevelPrivileged), WarnVersion: psaapi.VersionLatest,
	}}
}

// Validate implements pipeline.Validator with kube's checks of a
// PodSecurityConfiguration.
func (c *Config) Validate() error {
	d := &c.Defaults
	for _, l := range []struct {
		key   string
		value *string
		to    *psaapi.Level
	}{
		{"enforce", &d.Enforce, &c.policy.Enforce.Level},
		{"audit", &d.Audit, &c.policy.Audit.Level},
		{"warn", &d.Warn, &c.policy.Warn.Level},
	} {
		if *l.value == "" {
			*l.value = string(psaapi.LevelPrivileged)
		}
		level, err := psaapi.ParseLevel(*l.value)
		if err != nil {
			return invalid("defaults."+l.key, *l.value, err.Error())
		}
		*l.to = level
	}
	for _, v := range []struct {
		key   string
		value *string
		to    *psaapi.Version
	}{
		{"enforce-version", &d.EnforceVersion, &c.policy.Enforce.Version},
		{"audit-version", &d.AuditVersion, &c.policy.Audit.Version},
		{"warn-version", &d.WarnVersion, &c.policy.Warn.Version},
	} {
		if *v.value == "" {
			*v.value = psaapi.VersionLatest
		}
		version, err := psaapi.ParseVersion(*v.value)
		if err != nil {
			return invalid("defaults."+v.key, *v.value, err.Error())
		}
		*v.to = version
	}
	if err := checkList("exemptions.namespaces", c.Exemptions.Namespaces, func(s string) []string { return machinery.ValidateNamespaceName(s, false) }); err != nil {
		return err
	}
	if err := checkList("exemptions.runtimeClasses", c.Exemptions.RuntimeClasses, func(s string) []string { return machinery.NameIsDNSSubdomain(s, false) }); err != nil {
		return err
	}
	return checkList("exemptions.usernames", c.Exemptions.Usernames, func(s string) []string {
		if s == "" {
			return []string{"username must not be empty"}
		}
		return nil
	})
}

// checkList validates each entry and refuses duplicates, naming the index.
func checkList(key string, items []string, check func(string) []string) error {
	seen := map[string]bool{}
	for i, s := range items {
		k := fmt.Sprintf("%s[%d]", key, i)
		if errs := check(s); len(errs) > 0 {
			return invalid(k, s, strings.Join(errs, ", "))
		}
		if seen[s] {
			return &config.FieldError{Key: k, Msg: fmt.Sprintf("duplicate value %q", s)}
		}
		seen[s] = true
	}
	return nil
}

func invalid(key, value, msg string) error {
	return &config.FieldError{Key: key, Msg: fmt.Sprintf("invalid value %q: %s", value, msg)}
}

// Register adds the plugin to the validating-admission list.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindValidatingAdmission,
		Description: "enforces, audits and warns about the Pod Security Standards per namespace label.",
		Config:      func() any { return newConfig() },
		New:         func(cfg any) (any, error) { return New(cfg.(*Config)) },
	})
}
