package server

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/storage/encryption"
)

// LoadEncryption reads storage.encryptionProviderConfig. A nil config (no
// file) stores everything in plaintext; its For is nil-safe. An error is a
// config.FieldError on that key, naming the file and the field in it.
func LoadEncryption(cfg *config.Config) (*encryption.Config, error) {
	if cfg.Storage.EncryptionProviderConfig == "" {
		return nil, nil
	}
	c, err := encryption.LoadFile(cfg.Storage.EncryptionProviderConfig)
	if err != nil {
		return nil, &config.FieldError{Key: "storage.encryptionProviderConfig", Msg: err.Error()}
	}
	return c, nil
}

// watchCached says which resources the watch cache serves.
func watchCached(c config.WatchCache) func(schema.GroupResource) bool {
	if !c.Enabled {
		return nil
	}
	off := map[string]bool{}
	for _, r := range c.Disabled {
		off[r] = true
	}
	return func(gr schema.GroupResource) bool { return !off[gr.String()] }
}

// checkCacheNames refuses a storage.watchCache.disabled entry that names
// no served resource: a typo would otherwise leave the cache on silently.
func checkCacheNames(c config.WatchCache, resources *api.Registry) error {
	served := map[string]bool{}
	for _, r := range resources.All() {
		served[r.GroupResource().String()] = true
	}
	for i, name := range c.Disabled {
		if !served[name] {
			return &config.FieldError{Key: fmt.Sprintf("storage.watchCache.disabled[%d]", i), Msg: fmt.Sprintf("%q is not a served resource", name)}
		}
	}
	return nil
}
