package server

import (
	"github.com/kpipe/kpipe/config"
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
