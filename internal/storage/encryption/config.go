// Package encryption is encryption at rest: it reads kube's
// EncryptionConfiguration file (apiserver.config.k8s.io/v1) and turns it
// into one store.Transformer per resource. The stored format is kube's, so
// an etcd written by either server reads in the other:
// "k8s:enc:<provider>:v1:<key name>:" followed by the ciphertext.
package encryption

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/internal/storage/store"
)

// The file's types, named as kube names them; only the fields kpipe reads.
type fileConfig struct {
	Kind       string           `json:"kind"`
	APIVersion string           `json:"apiVersion"`
	Resources  []resourceConfig `json:"resources"`
}

type resourceConfig struct {
	Resources []string         `json:"resources"`
	Providers []providerConfig `json:"providers"`
}

type providerConfig struct {
	AESGCM    *keysConfig `json:"aesgcm,omitempty"`
	AESCBC    *keysConfig `json:"aescbc,omitempty"`
	Secretbox *keysConfig `json:"secretbox,omitempty"`
	Identity  *struct{}   `json:"identity,omitempty"`
	KMS       any         `json:"kms,omitempty"`
}

type keysConfig struct {
	Keys []keyConfig `json:"keys"`
}

type keyConfig struct {
	Name   string `json:"name"`
	Secret string `json:"secret"`
}

// Config maps resources to their transformers.
type Config struct {
	rules []rule
}

type rule struct {
	match string // "secrets", "deployments.apps", "*.apps", "*." or "*.*"
	t     store.Transformer
}

// LoadFile reads an EncryptionConfiguration. Every error names the file
// and the offending field.
func LoadFile(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("encryption config: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("encryption config %s: %w", path, err)
	}
	return c, nil
}

// Parse reads an EncryptionConfiguration from data.
func Parse(data []byte) (*Config, error) {
	var f fileConfig
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, err
	}
	if f.Kind != "EncryptionConfiguration" {
		return nil, fmt.Errorf("kind: must be EncryptionConfiguration, got %q", f.Kind)
	}
	if f.APIVersion != "apiserver.config.k8s.io/v1" {
		return nil, fmt.Errorf("apiVersion: must be apiserver.config.k8s.io/v1, got %q", f.APIVersion)
	}
	if len(f.Resources) == 0 {
		return nil, fmt.Errorf("resources: at least one entry is required")
	}
	c := &Config{}
	seen := map[string]string{}
	for i, rc := range f.Resources {
		at := fmt.Sprintf("resources[%d]", i)
		if len(rc.Resources) == 0 {
			return nil, fmt.Errorf("%s.resources: at least one resource is required", at)
		}
		t, err := newChain(rc.Providers, at+".providers")
		if err != nil {
			return nil, err
		}
		for j, r := range rc.Resources {
			field := fmt.Sprintf("%s.resources[%d]", at, j)
			r = strings.ToLower(r)
			if err := validResource(r); err != nil {
				return nil, fmt.Errorf("%s: %w", field, err)
			}
			if prev, dup := seen[r]; dup {
				return nil, fmt.Errorf("%s: %q is already listed at %s", field, r, prev)
			}
			seen[r] = field
			c.rules = append(c.rules, rule{match: r, t: t})
		}
	}
	return c, nil
}

func validResource(r string) error {
	switch {
	case r == "":
		return fmt.Errorf("must not be empty")
	case r == "*":
		return fmt.Errorf(`"*" is not allowed; use "*.*" for every resource or "*." for the core group`)
	case strings.Contains(r, "*") && !strings.HasPrefix(r, "*."):
		return fmt.Errorf("%q: a wildcard must be the whole resource part (\"*.<group>\")", r)
	}
	return nil
}

// For returns the transformer of gr, or nil when gr is stored in plaintext.
// As in kube, the first entry in file order that matches wins: the exact
// name, "*.<group>" ("*." for the core group) or "*.*".
func (c *Config) For(gr schema.GroupResource) store.Transformer {
	if c == nil {
		return nil
	}
	name := gr.Resource
	if gr.Group != "" {
		name += "." + gr.Group
	}
	for _, r := range c.rules {
		if r.match == name || r.match == "*."+gr.Group || r.match == "*.*" {
			return r.t
		}
	}
	return nil
}

// decodeSecret reads a base64 key of the lengths a provider accepts.
func decodeSecret(k keyConfig, field string, sizes ...int) ([]byte, error) {
	if k.Name == "" {
		return nil, fmt.Errorf("%s.name: required", field)
	}
	if strings.Contains(k.Name, ":") {
		return nil, fmt.Errorf("%s.name: %q must not contain ':'", field, k.Name)
	}
	b, err := base64.StdEncoding.DecodeString(k.Secret)
	if err != nil {
		return nil, fmt.Errorf("%s.secret: not valid base64: %v", field, err)
	}
	for _, n := range sizes {
		if len(b) == n {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%s.secret: key is %d bytes, want one of %v", field, len(b), sizes)
}
