// Package audit is the audit stage: kube-apiserver's audit policy, log
// backend and webhook backend. Each request the policy selects is written
// as audit.k8s.io/v1 Event JSON lines, one per stage, to a rotated log
// file, and/or sent in audit.k8s.io/v1 EventLists to a webhook.
package audit

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the stage's name in apiserver.yaml.
const Name = "audit"

// Config is the stage's config block. Without a policy the stage only
// sets the Audit-Id header, as kube without --audit-policy-file.
type Config struct {
	// PolicyFile is an audit.k8s.io/v1 Policy file (kube's
	// --audit-policy-file), re-read when it changes on disk.
	PolicyFile string `koanf:"policyFile"`
	// Policy is the same Policy inline.
	Policy map[string]any `koanf:"policy"`
	// LogPath is the log file, "-" for standard output (--audit-log-path).
	LogPath string `koanf:"logPath"`
	// MaxSize is the size in megabytes at which the file is rotated; 0 is
	// 100 (--audit-log-maxsize).
	MaxSize int `koanf:"maxSize"`
	// MaxBackup is how many rotated files are kept; 0 keeps all
	// (--audit-log-maxbackup).
	MaxBackup int `koanf:"maxBackup"`
	// MaxAge is how many days rotated files are kept; 0 keeps them
	// (--audit-log-maxage).
	MaxAge int `koanf:"maxAge"`
	// Webhook sends the events to a remote receiver too
	// (--audit-webhook-*).
	Webhook WebhookConfig `koanf:"webhook"`

	policy *Policy // parsed at Validate
}

// Validate implements pipeline.Validator.
func (c *Config) Validate() error {
	switch {
	case c.PolicyFile != "" && c.Policy != nil:
		return &config.FieldError{Key: "policy", Msg: "give policyFile or policy, not both"}
	case c.PolicyFile != "":
		data, err := os.ReadFile(c.PolicyFile)
		if err != nil {
			return &config.FieldError{Key: "policyFile", Msg: err.Error()}
		}
		p, _, err := ParsePolicy(data)
		if err != nil {
			return &config.FieldError{Key: "policyFile", Msg: fmt.Sprintf("%s: %v", c.PolicyFile, err)}
		}
		c.policy = p
	case c.Policy != nil:
		data, err := json.Marshal(c.Policy)
		if err != nil {
			return &config.FieldError{Key: "policy", Msg: err.Error()}
		}
		p, _, err := ParsePolicy(data)
		if err != nil {
			return &config.FieldError{Key: "policy", Msg: err.Error()}
		}
		c.policy = p
	}
	if err := c.Webhook.validate(); err != nil {
		return err
	}
	if c.policy != nil && c.LogPath == "" && !c.Webhook.enabled() {
		return &config.FieldError{Key: "logPath", Msg: "is required with a policy (or webhook.configFile)"}
	}
	if c.policy == nil && c.Webhook.enabled() {
		return &config.FieldError{Key: "webhook.configFile", Msg: "needs policyFile or policy"}
	}
	for key, v := range map[string]int{"maxSize": c.MaxSize, "maxBackup": c.MaxBackup, "maxAge": c.MaxAge} {
		if v < 0 {
			return &config.FieldError{Key: key, Msg: "must not be negative"}
		}
	}
	return nil
}

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "writes audit.k8s.io/v1 events by policy.",
		Config:      func() any { return &Config{Webhook: defaultWebhookConfig()} },
		New:         func(c any) (any, error) { return newStage(c.(*Config)), nil },
		Requires:    []string{"authentication"},
	})
}
