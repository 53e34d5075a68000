package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// maxListChunk caps how far a filtered list grows its etcd page size, as
// kube's maxLimit does.
const maxListChunk = 10000

// GetList implements Interface. All pages of a list read at the revision
// of the first one, carried in the continue token, so a paged list is one
// consistent snapshot.
func (s *Store) GetList(ctx context.Context, key string, opts ListOptions, listObj runtime.Object) error {
	keyPrefix, err := s.checkKey(key, opts.Recursive)
	if err != nil {
		return err
	}
	listMeta, err := meta.ListAccessor(listObj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	withRev, continueKey, err := s.listStart(keyPrefix, opts)
	if err != nil {
		return err
	}
	ctx, cancel := s.reqCtx(ctx)
	defer cancel()

	pred := opts.Predicate
	paging := pred.Limit > 0
	limit := pred.Limit
	rangeStart := keyPrefix
	if continueKey != "" {
		rangeStart = continueKey
	}
	items := []runtime.Object{}
	var lastKey string
	var hasMore bool
	var count int64
	// Fetch in chunks until the limit is filled after filtering, as kube
	// does: a selective filter may need several etcd pages for one page.
	for {
		resp, err := s.readRange(ctx, rangeStart, keyPrefix, opts.Recursive, withRev, limit)
		if err != nil {
			return s.listError(ctx, err, withRev, pred.Continue != "", rangeStart, keyPrefix)
		}
		if withRev == 0 {
			minRV, err := parseRV(opts.ResourceVersion)
			if err != nil {
				return apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %v", err))
			}
			if minRV > resp.Header.Revision {
				return tooLargeRV(minRV, resp.Header.Revision, 0)
			}
			withRev = resp.Header.Revision
		}
		count = resp.Count
		limitReached := false
		for _, kv := range resp.Kvs {
			if paging && int64(len(items)) >= pred.Limit {
				limitReached = true
				break
			}
			lastKey = string(kv.Key)
			obj := s.newFunc()
			if err := s.decodeStored(ctx, kv.Value, string(kv.Key), obj, kv.ModRevision); err != nil {
				return err
			}
			if ok, err := pred.Matches(obj); err == nil && ok {
				items = append(items, obj)
			}
		}
		hasMore = resp.More || limitReached
		if limitReached || !resp.More || (paging && int64(len(items)) >= pred.Limit) {
			break
		}
		rangeStart = lastKey + "\x00"
		if limit < maxListChunk {
			limit = min(limit*2, maxListChunk)
		}
	}

	var next string
	var remaining *int64
	if hasMore {
		if next, err = encodeContinue(lastKey+"\x00", keyPrefix, withRev); err != nil {
			return apierrors.NewInternalError(err)
		}
		// Only an unfiltered list knows how many items remain.
		if pred.Empty() {
			n := count - pred.Limit
			remaining = &n
		}
	}
	if err := meta.SetList(listObj, items); err != nil {
		return apierrors.NewInternalError(err)
	}
	listMeta.SetResourceVersion(fmt.Sprint(withRev))
	listMeta.SetContinue(next)
	listMeta.SetRemainingItemCount(remaining)
	return nil
}

// readRange reads one chunk: up to limit keys from start to the end of
// keyPrefix at rev (0 = current), or the single key when not recursive.
// Count is etcd's count of keys from start on, this chunk included.
func (s *Store) readRange(ctx context.Context, start, keyPrefix string, recursive bool, rev, limit int64) (*clientv3.GetResponse, error) {
	op := "get"
	opts := []clientv3.OpOption{clientv3.WithRev(rev)}
	if recursive {
		op = "list"
		opts = append(opts, clientv3.WithRange(clientv3.GetPrefixRangeEnd(keyPrefix)), clientv3.WithLimit(limit))
	}
	t := time.Now()
	resp, err := s.client.Get(ctx, start, opts...)
	s.metrics.observe(op, s.gr, t, err)
	return resp, err
}

// listStart works out the revision and start key of a list, as kube's
// storage.ValidateListOptions does.
func (s *Store) listStart(keyPrefix string, opts ListOptions) (withRev int64, continueKey string, err error) {
	if opts.Recursive && opts.Predicate.Continue != "" {
		continueKey, rv, err := decodeContinue(opts.Predicate.Continue, keyPrefix)
		if err != nil {
			return 0, "", apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err))
		}
		if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			return 0, "", apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		// rv < 0 is the inconsistent token handed out after compaction:
		// continue at the latest revision.
		if rv > 0 {
			withRev = rv
		}
		return withRev, continueKey, nil
	}
	if opts.ResourceVersion == "" {
		return 0, "", nil
	}
	rv, err := parseRV(opts.ResourceVersion)
	if err != nil {
		return 0, "", apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %v", err))
	}
	switch opts.ResourceVersionMatch {
	case metav1.ResourceVersionMatchNotOlderThan:
		// Checked against the revision of the read.
	case metav1.ResourceVersionMatchExact:
		withRev = rv
	case "":
		// Legacy: a paged list with a resourceVersion reads at it.
		if opts.Recursive && opts.Predicate.Limit > 0 && rv > 0 {
			withRev = rv
		}
	default:
		return 0, "", unknownError(fmt.Sprintf("unknown ResourceVersionMatch value: %v", opts.ResourceVersionMatch))
	}
	return withRev, "", nil
}

// listError maps a list read error as kube does: a future revision is
// "too large", a compacted one is 410 Expired and, when continuing, carries
// a token that resumes at the latest revision.
func (s *Store) listError(ctx context.Context, err error, withRev int64, paging bool, continueKey, keyPrefix string) error {
	switch {
	case errors.Is(err, rpctypes.ErrFutureRev):
		cur, cerr := s.CurrentRevision(ctx)
		if cerr != nil {
			cur = 0
		}
		return tooLargeRV(withRev, cur, 0)
	case errors.Is(err, rpctypes.ErrCompacted):
		if !paging {
			return apierrors.NewResourceExpired(listExpiredMsg)
		}
		token, terr := encodeContinue(continueKey, keyPrefix, -1)
		if terr != nil {
			return apierrors.NewResourceExpired(continueExpired)
		}
		se := apierrors.NewResourceExpired(inconsistentContinue)
		se.ErrStatus.ListMeta.Continue = token
		return se
	}
	return s.toAPIError(err, "list")
}

// continueToken is kube's continue token (k8s.io/apiserver storage
// continue.go), so clients that inspect tokens work unchanged.
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

const continueVersion = "meta.k8s.io/v1"

// Continue-token errors with kube's wording.
var (
	errInvalidStartRV             = errors.New("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	errEmptyStartKey              = errors.New("continue key is not valid: encoded start key empty (version meta.k8s.io/v1)")
	errGenericInvalidKey          = errors.New("continue key is not valid")
	errUnrecognizedEncodedVersion = errors.New("continue key is not valid: server does not recognize this encoded version")
)

// encodeContinue makes the token that resumes a list of keyPrefix at key.
func encodeContinue(key, keyPrefix string, rev int64) (string, error) {
	next := strings.TrimPrefix(key, keyPrefix)
	if next == key {
		return "", errors.New("unable to encode next field: the key and key prefix do not match")
	}
	out, err := json.Marshal(&continueToken{APIVersion: continueVersion, ResourceVersion: rev, StartKey: next})
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// decodeContinue checks a token strictly and returns the full key to start
// from; a start key that is not a clean path cannot escape keyPrefix.
func decodeContinue(token, keyPrefix string) (string, int64, error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %v", errGenericInvalidKey, err)
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, fmt.Errorf("%w: %v", errGenericInvalidKey, err)
	}
	if c.APIVersion != continueVersion {
		return "", 0, fmt.Errorf("%w %v", errUnrecognizedEncodedVersion, c.APIVersion)
	}
	if c.ResourceVersion == 0 {
		return "", 0, errInvalidStartRV
	}
	if c.StartKey == "" {
		return "", 0, errEmptyStartKey
	}
	k := c.StartKey
	if !strings.HasPrefix(k, "/") {
		k = "/" + k
	}
	if cleaned := path.Clean(k); cleaned != k {
		return "", 0, fmt.Errorf("%w: %v", errGenericInvalidKey, c.StartKey)
	}
	return keyPrefix + k[1:], c.ResourceVersion, nil
}

// EncodeContinue is the token that resumes a list of keyPrefix at key
// with all pages read at rev: the watch cache hands it out for a first
// page it served, and this store serves the pages after it.
func EncodeContinue(key, keyPrefix string, rev int64) (string, error) {
	return encodeContinue(key, keyPrefix, rev)
}
