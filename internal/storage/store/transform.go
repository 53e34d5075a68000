package store

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

// Transformer turns a value into its stored form and back: encryption at
// rest. The etcd key is given so a cipher can bind the value to it.
type Transformer interface {
	TransformToStorage(ctx context.Context, plain []byte, key string) ([]byte, error)
	// TransformFromStorage returns stale=true when the value was written
	// with another key or provider than the one that writes now; the next
	// update then rewrites it even if nothing else changed.
	TransformFromStorage(ctx context.Context, stored []byte, key string) (plain []byte, stale bool, err error)
}

// WithTransformer stores values through t (default: plaintext).
func WithTransformer(t Transformer) Option {
	return func(s *Store) { s.transformer = t }
}

// toStorage is what is written to etcd for the plaintext data.
func (s *Store) toStorage(ctx context.Context, data []byte, key string) ([]byte, error) {
	if s.transformer == nil {
		return data, nil
	}
	out, err := s.transformer.TransformToStorage(ctx, data, key)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return out, nil
}

// fromStorage is the plaintext of a value read from etcd.
func (s *Store) fromStorage(ctx context.Context, value []byte, key string) (data []byte, stale bool, err error) {
	if s.transformer == nil {
		return value, false, nil
	}
	data, stale, err = s.transformer.TransformFromStorage(ctx, value, key)
	if err != nil {
		return nil, false, apierrors.NewInternalError(err)
	}
	return data, stale, nil
}

// decodeStored decodes a value read from etcd under key.
func (s *Store) decodeStored(ctx context.Context, value []byte, key string, into runtime.Object, rev int64) error {
	data, _, err := s.fromStorage(ctx, value, key)
	if err != nil {
		return err
	}
	return s.decode(data, into, rev)
}
