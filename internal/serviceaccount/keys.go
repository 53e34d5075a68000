package serviceaccount

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// KeyFile names of the generated key pair under stateDir/pki, kubeadm's.
const (
	GeneratedKey    = "sa.key"
	GeneratedPubKey = "sa.pub"
)

// LoadOrCreateKey reads dir/sa.key, or generates one there (and dir/sa.pub
// beside it) on first start, as kubeadm provisions one. It is ECDSA P-256
// (tokens are ES256, which kube accepts): quick to generate, unlike RSA.
func LoadOrCreateKey(dir string) (crypto.Signer, bool, error) {
	path, pubPath := filepath.Join(dir, GeneratedKey), filepath.Join(dir, GeneratedPubKey)
	if _, err := os.Stat(path); err == nil {
		k, err := LoadSigningKey(path)
		if err != nil {
			return nil, false, err
		}
		// sa.pub is only sa.key's public half: put it back if it is gone
		// (a crash between the two writes), as replicas may be given it.
		if _, statErr := os.Stat(pubPath); errors.Is(statErr, os.ErrNotExist) {
			if err := writePublicKey(pubPath, k); err != nil {
				return nil, false, err
			}
		}
		return k, false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, false, fmt.Errorf("service account key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, err
	}
	if err := writeAtomic(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return nil, false, err
	}
	if err := writePublicKey(pubPath, key); err != nil {
		return nil, false, err
	}
	return key, true, nil
}

func writePublicKey(path string, key crypto.Signer) error {
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return err
	}
	return writeAtomic(path, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644)
}

func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// LoadSigningKey reads a PEM private key (PKCS#8, PKCS#1 or SEC 1), RSA or
// ECDSA: kube's --service-account-signing-key-file.
func LoadSigningKey(path string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, fmt.Errorf("%s: no PEM private key", path)
		}
		var key any
		switch block.Type {
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(block.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		switch k := key.(type) {
		case *rsa.PrivateKey:
			return k, nil
		case *ecdsa.PrivateKey:
			return k, nil
		}
		return nil, fmt.Errorf("%s: a %T is neither an RSA nor an ECDSA key", path, key)
	}
}

// LoadPublicKeys reads every public key in a PEM file: public keys,
// certificates, or private keys (their public half), as kube's
// --service-account-key-file accepts.
func LoadPublicKeys(path string) ([]crypto.PublicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var keys []crypto.PublicKey
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		var key any
		switch block.Type {
		case "PUBLIC KEY":
			key, err = x509.ParsePKIXPublicKey(block.Bytes)
		case "RSA PUBLIC KEY":
			key, err = x509.ParsePKCS1PublicKey(block.Bytes)
		case "CERTIFICATE":
			var c *x509.Certificate
			if c, err = x509.ParseCertificate(block.Bytes); err == nil {
				key = c.PublicKey
			}
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(block.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if s, ok := key.(crypto.Signer); ok {
			key = s.Public()
		}
		switch key.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey:
			keys = append(keys, key)
		default:
			return nil, fmt.Errorf("%s: a %T is neither an RSA nor an ECDSA key", path, key)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: no public keys", path)
	}
	return keys, nil
}

// keyID derives a key id from a public key as kube does: the unpadded
// base64url SHA-256 of its PKIX DER, so tokens name the key they need.
func keyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}
