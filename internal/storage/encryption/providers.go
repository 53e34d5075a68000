package encryption

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"

	"golang.org/x/crypto/nacl/secretbox"

	"github.com/kpipe/kpipe/internal/storage/store"
)

// sealer is one key of one provider.
type sealer interface {
	seal(plain []byte, key string) ([]byte, error)
	open(sealed []byte, key string) ([]byte, error)
}

// prefixed is a sealer with the prefix that marks its values.
type prefixed struct {
	prefix []byte
	s      sealer // nil for identity
}

// chain is a resource's providers in order: the first writes, every one
// reads the values bearing its prefix.
type chain struct {
	readers []prefixed
}

var _ store.Transformer = (*chain)(nil)

func newChain(pcs []providerConfig, field string) (*chain, error) {
	if len(pcs) == 0 {
		return nil, fmt.Errorf("%s: at least one provider is required", field)
	}
	c := &chain{}
	for i, pc := range pcs {
		at := fmt.Sprintf("%s[%d]", field, i)
		n := 0
		for _, set := range []bool{pc.AESGCM != nil, pc.AESCBC != nil, pc.Secretbox != nil, pc.Identity != nil, pc.KMS != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			return nil, fmt.Errorf("%s: exactly one provider type is required (aesgcm, aescbc, secretbox or identity), got %d", at, n)
		}
		switch {
		case pc.KMS != nil:
			return nil, fmt.Errorf("%s.kms: the KMS provider is not supported by kpipe", at)
		case pc.Identity != nil:
			c.readers = append(c.readers, prefixed{})
		case pc.AESGCM != nil:
			if err := c.addKeys(pc.AESGCM, at+".aesgcm", "aesgcm", newGCM, 16, 24, 32); err != nil {
				return nil, err
			}
		case pc.AESCBC != nil:
			if err := c.addKeys(pc.AESCBC, at+".aescbc", "aescbc", newCBC, 16, 24, 32); err != nil {
				return nil, err
			}
		case pc.Secretbox != nil:
			if err := c.addKeys(pc.Secretbox, at+".secretbox", "secretbox", newSecretbox, 32); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

func (c *chain) addKeys(kc *keysConfig, field, provider string, mk func([]byte) (sealer, error), sizes ...int) error {
	if len(kc.Keys) == 0 {
		return fmt.Errorf("%s.keys: at least one key is required", field)
	}
	for i, k := range kc.Keys {
		at := fmt.Sprintf("%s.keys[%d]", field, i)
		secret, err := decodeSecret(k, at, sizes...)
		if err != nil {
			return err
		}
		s, err := mk(secret)
		if err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		c.readers = append(c.readers, prefixed{prefix: []byte("k8s:enc:" + provider + ":v1:" + k.Name + ":"), s: s})
	}
	return nil
}

// TransformToStorage implements store.Transformer with the first provider.
func (c *chain) TransformToStorage(_ context.Context, plain []byte, key string) ([]byte, error) {
	w := c.readers[0]
	if w.s == nil {
		return plain, nil
	}
	sealed, err := w.s.seal(plain, key)
	if err != nil {
		return nil, err
	}
	return append(append(make([]byte, 0, len(w.prefix)+len(sealed)), w.prefix...), sealed...), nil
}

// TransformFromStorage implements store.Transformer: the provider whose
// prefix the value bears reads it, and the value is stale unless that is
// the first provider, so the next write re-encrypts it.
func (c *chain) TransformFromStorage(_ context.Context, stored []byte, key string) ([]byte, bool, error) {
	for i, r := range c.readers {
		if r.s == nil {
			continue
		}
		if bytes.HasPrefix(stored, r.prefix) {
			plain, err := r.s.open(stored[len(r.prefix):], key)
			if err != nil {
				return nil, false, fmt.Errorf("decrypting %s with %s: %w", key, bytes.TrimSuffix(r.prefix, []byte(":")), err)
			}
			return plain, i != 0, nil
		}
	}
	// Identity reads what no key claimed, as long as it is configured and
	// the value is not some other provider's ciphertext.
	for i, r := range c.readers {
		if r.s == nil {
			if bytes.HasPrefix(stored, []byte("k8s:enc:")) {
				break
			}
			return stored, i != 0, nil
		}
	}
	return nil, false, fmt.Errorf("no configured provider can read the value of %s", key)
}

// gcm is AES-GCM with a random 12-byte nonce; the etcd key is the
// additional data, so a value copied under another key does not open.
type gcm struct{ aead cipher.AEAD }

func newGCM(k []byte) (sealer, error) {
	b, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	a, err := cipher.NewGCM(b)
	if err != nil {
		return nil, err
	}
	return gcm{a}, nil
}

func (g gcm) seal(plain []byte, key string) ([]byte, error) {
	out := make([]byte, g.aead.NonceSize(), g.aead.NonceSize()+len(plain)+g.aead.Overhead())
	if _, err := rand.Read(out); err != nil {
		return nil, err
	}
	return g.aead.Seal(out, out, plain, []byte(key)), nil
}

func (g gcm) open(sealed []byte, key string) ([]byte, error) {
	n := g.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("value too short")
	}
	return g.aead.Open(nil, sealed[:n], sealed[n:], []byte(key))
}

// cbc is AES-CBC with a random IV and PKCS#7 padding.
type cbc struct{ block cipher.Block }

func newCBC(k []byte) (sealer, error) {
	b, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cbc{b}, nil
}

func (c cbc) seal(plain []byte, _ string) ([]byte, error) {
	bs := c.block.BlockSize()
	pad := bs - len(plain)%bs
	out := make([]byte, bs+len(plain)+pad)
	if _, err := rand.Read(out[:bs]); err != nil {
		return nil, err
	}
	copy(out[bs:], plain)
	for i := bs + len(plain); i < len(out); i++ {
		out[i] = byte(pad)
	}
	cipher.NewCBCEncrypter(c.block, out[:bs]).CryptBlocks(out[bs:], out[bs:])
	return out, nil
}

func (c cbc) open(sealed []byte, _ string) ([]byte, error) {
	bs := c.block.BlockSize()
	if len(sealed) < 2*bs || len(sealed)%bs != 0 {
		return nil, errors.New("value is not a whole number of blocks")
	}
	out := make([]byte, len(sealed)-bs)
	cipher.NewCBCDecrypter(c.block, sealed[:bs]).CryptBlocks(out, sealed[bs:])
	pad := int(out[len(out)-1])
	if pad == 0 || pad > bs {
		return nil, errors.New("invalid padding")
	}
	for _, p := range out[len(out)-pad:] {
		if int(p) != pad {
			return nil, errors.New("invalid padding")
		}
	}
	return out[:len(out)-pad], nil
}

// box is NaCl secretbox (XSalsa20-Poly1305) with a random 24-byte nonce.
type box struct{ key [32]byte }

func newSecretbox(k []byte) (sealer, error) {
	var b box
	copy(b.key[:], k)
	return b, nil
}

func (b box) seal(plain []byte, _ string) ([]byte, error) {
	var nonce [24]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	return secretbox.Seal(nonce[:], plain, &nonce, &b.key), nil
}

func (b box) open(sealed []byte, _ string) ([]byte, error) {
	if len(sealed) < 24 {
		return nil, errors.New("value too short")
	}
	var nonce [24]byte
	copy(nonce[:], sealed[:24])
	out, ok := secretbox.Open(nil, sealed[24:], &nonce, &b.key)
	if !ok {
		return nil, errors.New("authentication failed")
	}
	return out, nil
}
