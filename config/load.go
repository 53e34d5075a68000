package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
)

// EnvPrefix starts every environment variable kpipe reads. The rest of the
// name is the key's path in upper case with dots as underscores:
// server.securePort is APISERVER_SERVER_SECUREPORT, storage.etcd.endpoints
// is APISERVER_STORAGE_ETCD_ENDPOINTS (a comma-separated list).
const EnvPrefix = "APISERVER_"

// DefaultFile is read when --config is not given and the file exists.
const DefaultFile = "apiserver.yaml"

// Options says where to load from. Sources rise in priority: defaults, the
// file, the environment, the flags.
type Options struct {
	// File is the config file. Empty means DefaultFile if it exists.
	File string
	// Environ is the environment as os.Environ gives it; nil means os.Environ().
	Environ []string
	// Flags maps keys to values of flags the user set (see FlagSet).
	Flags map[string]any
	// FlagNames maps keys back to the flag that set them, for errors.
	FlagNames map[string]string
}

// Loaded is a validated config and where each part came from.
type Loaded struct {
	*Config
	// File is the file read, or "" when running on defaults.
	File   string
	layers []layer
}

type layer struct {
	name string         // how errors refer to this source
	data map[string]any // nested, as decoded
	keys map[string]string
}

// Load reads, merges, decodes and validates. Its error names the key and
// the source of the bad value.
func Load(o Options) (*Loaded, error) {
	l := &Loaded{Config: Default()}

	path := o.File
	if path == "" {
		if _, err := os.Stat(DefaultFile); err == nil {
			path = DefaultFile
		}
	}
	if path != "" {
		k := koanf.New(".")
		if err := k.Load(file.Provider(path), yaml.Parser()); err != nil {
			return nil, fileError(path, err)
		}
		l.File = path
		l.layers = append(l.layers, layer{name: path, data: k.Raw()})
	}

	envData, envKeys, err := loadEnv(o.Environ)
	if err != nil {
		return nil, err
	}
	if len(envData) > 0 {
		l.layers = append(l.layers, layer{name: "environment", data: envData, keys: envKeys})
	}
	if len(o.Flags) > 0 {
		k := koanf.New(".")
		for key, v := range o.Flags {
			if err := k.Set(key, v); err != nil {
				return nil, err
			}
		}
		l.layers = append(l.layers, layer{name: "flags", data: k.Raw(), keys: o.FlagNames})
	}

	for _, ly := range l.layers {
		if err := Decode(ly.data, l.Config, ""); err != nil {
			return nil, ly.attribute(err)
		}
	}
	if err := l.Config.Validate(); err != nil {
		return nil, l.Attribute(err)
	}
	return l, nil
}

// SourceOf names where key's effective value came from.
func (l *Loaded) SourceOf(key string) string {
	for i := len(l.layers) - 1; i >= 0; i-- {
		if l.layers[i].has(key) {
			return l.layers[i].describe(key)
		}
	}
	return "default"
}

// Attribute adds to each *FieldError in err the source of its key.
func (l *Loaded) Attribute(err error) error {
	var out []error
	for _, e := range unjoin(err) {
		var fe *FieldError
		if errors.As(e, &fe) && fe.Source == "" {
			c := *fe
			c.Source = l.SourceOf(fe.Key)
			e = &c
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}

func (ly layer) attribute(err error) error {
	var fe *FieldError
	if errors.As(err, &fe) && fe.Source == "" {
		c := *fe
		c.Source = ly.describe(fe.Key)
		return &c
	}
	return err
}

func (ly layer) describe(key string) string {
	if name, ok := ly.keys[topKey(key)]; ok {
		return name
	}
	return ly.name
}

func (ly layer) has(key string) bool {
	var cur any = ly.data
	for _, part := range strings.Split(topKey(key), ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[part]; !ok {
			return false
		}
	}
	return true
}

// topKey drops list indexes and what follows: the source of
// pipeline[3].config.x is whoever set pipeline.
func topKey(key string) string {
	if i := strings.IndexByte(key, '['); i >= 0 {
		return key[:i]
	}
	return key
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func fileError(path string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("config file %s: does not exist", path)
	}
	if errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("config file %s: cannot be read: permission denied", path)
	}
	return fmt.Errorf("config file %s: %v", path, err)
}

// EnvKeys maps each environment variable name to the key it sets. Only
// scalar keys and lists of strings can come from the environment.
func EnvKeys() map[string]string {
	out := map[string]string{}
	for _, kv := range Keys(Default()) {
		if !envSettable(kv.Value) {
			continue
		}
		out[EnvPrefix+strings.ToUpper(strings.ReplaceAll(kv.Key, ".", "_"))] = kv.Key
	}
	return out
}

func envSettable(v any) bool {
	t := reflect.TypeOf(v)
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Slice:
		return t.Elem().Kind() == reflect.String
	case reflect.Map, reflect.Struct:
		return false
	}
	return true
}

func loadEnv(environ []string) (map[string]any, map[string]string, error) {
	if environ == nil {
		environ = os.Environ()
	}
	known := EnvKeys()
	names := map[string]string{}
	var unknown []string
	k := koanf.New(".")
	err := k.Load(env.Provider(".", env.Opt{
		Prefix:      EnvPrefix,
		EnvironFunc: func() []string { return environ },
		TransformFunc: func(name, v string) (string, any) {
			key, ok := known[name]
			if !ok {
				unknown = append(unknown, name)
				return "", nil
			}
			names[key] = "environment variable " + name
			return key, v
		},
	}), nil)
	if err != nil {
		return nil, nil, err
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, nil, fmt.Errorf("environment variable %s: unknown key (see `apiserver config print` for the keys; the variable is the key in upper case with dots as underscores after %s)", unknown[0], EnvPrefix)
	}
	return k.Raw(), names, nil
}

// FromConfig validates a config built in code (tests, embedding) and wraps
// it as if it had been loaded, with every value from "code".
func FromConfig(c *Config) (*Loaded, error) {
	l := &Loaded{Config: c}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return l, nil
}
