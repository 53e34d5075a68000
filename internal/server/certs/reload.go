package certs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"
)

const (
	// recheckInterval bounds how late a change is noticed when file events
	// are missed (e.g. the watched directory itself was replaced).
	recheckInterval = time.Minute
	// settleDelay lets a burst of events (cert then key replaced) finish
	// before reading, so a half-updated pair is seldom seen.
	settleDelay = 100 * time.Millisecond
)

// FileCertificate is a serving keypair loaded from operator-given files and
// reloaded when they change on disk.
type FileCertificate struct {
	src fileSource
	cur atomic.Pointer[tls.Certificate]
}

// NewFileCertificate loads certFile and keyFile at once; the error names the
// unreadable or invalid file.
func NewFileCertificate(certFile, keyFile string, log *zap.Logger) (*FileCertificate, error) {
	c := &FileCertificate{}
	c.src = fileSource{
		files: []string{certFile, keyFile},
		what:  "serving certificate",
		log:   orNop(log),
		apply: func(b [][]byte) error {
			pair, err := loadPair(certFile, b[0], keyFile, b[1])
			if err == nil {
				c.cur.Store(pair)
			}
			return err
		},
	}
	if err := c.src.load(); err != nil {
		return nil, err
	}
	return c, nil
}

// Run watches the files until ctx is done.
func (c *FileCertificate) Run(ctx context.Context) { c.src.run(ctx) }

// GetCertificate suits tls.Config.GetCertificate.
func (c *FileCertificate) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return c.cur.Load(), nil
}

// Current returns the pair in use; callers must not modify it.
func (c *FileCertificate) Current() *tls.Certificate { return c.cur.Load() }

func loadPair(certFile string, certPEM []byte, keyFile string, keyPEM []byte) (*tls.Certificate, error) {
	// Parse each file on its own first so the error says which one is bad.
	leaf, err := parseCertPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("certs: %s: %w", certFile, err)
	}
	if _, err := parseKeyPEM(keyPEM); err != nil {
		return nil, fmt.Errorf("certs: %s: %w", keyFile, err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("certs: %s with %s: %w", certFile, keyFile, err)
	}
	pair.Leaf = leaf
	return &pair, nil
}

// FileCAPool is a client-CA bundle file, reloaded when it changes on disk.
type FileCAPool struct {
	src fileSource
	cur atomic.Pointer[caBundle]
}

type caBundle struct {
	pool *x509.CertPool
	pem  []byte
}

// NewFileCAPool loads caFile at once; the error names the file.
func NewFileCAPool(caFile string, log *zap.Logger) (*FileCAPool, error) {
	p := &FileCAPool{}
	p.src = fileSource{
		files: []string{caFile},
		what:  "client CA bundle",
		log:   orNop(log),
		apply: func(b [][]byte) error {
			bundle, err := parseBundle(caFile, b[0])
			if err == nil {
				p.cur.Store(bundle)
			}
			return err
		},
	}
	if err := p.src.load(); err != nil {
		return nil, err
	}
	return p, nil
}

// Run watches the file until ctx is done.
func (p *FileCAPool) Run(ctx context.Context) { p.src.run(ctx) }

// Pool returns the current pool. It is replaced, never changed, on reload,
// so callers must not add to it.
func (p *FileCAPool) Pool() *x509.CertPool { return p.cur.Load().pool }

// PEM returns a copy of the current bundle.
func (p *FileCAPool) PEM() []byte { return bytes.Clone(p.cur.Load().pem) }

func parseBundle(caFile string, data []byte) (*caBundle, error) {
	pool := x509.NewCertPool()
	n := 0
	for rest := data; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		// A key or other block here is a mistake worth reporting.
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("certs: %s: unexpected PEM block %q", caFile, block.Type)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certs: %s: certificate %d: %w", caFile, n+1, err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("certs: %s: no PEM certificates", caFile)
	}
	return &caBundle{pool: pool, pem: bytes.Clone(data)}, nil
}

// fileSource re-reads a set of files when they may have changed and hands
// their contents to apply; it drives both FileCertificate and FileCAPool.
type fileSource struct {
	files []string
	what  string
	log   *zap.Logger
	apply func(contents [][]byte) error

	mu sync.Mutex
	// last digests what the previous check saw (contents or read error), so
	// unchanged files are neither re-applied nor re-reported every minute.
	last [sha256.Size]byte
}

func (s *fileSource) read() ([][]byte, [sha256.Size]byte, error) {
	h := sha256.New()
	contents := make([][]byte, len(s.files))
	for i, f := range s.files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, sha256.Sum256([]byte(err.Error())), fmt.Errorf("certs: %w", err)
		}
		fmt.Fprintf(h, "%d:", len(b))
		h.Write(b)
		contents[i] = b
	}
	return contents, [sha256.Size]byte(h.Sum(nil)), nil
}

// load is the initial, fatal-on-error load.
func (s *fileSource) load() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	contents, sum, err := s.read()
	if err != nil {
		return err
	}
	if err := s.apply(contents); err != nil {
		return err
	}
	s.last = sum
	return nil
}

// check reloads if the files changed; on failure the previous value stays.
func (s *fileSource) check() {
	s.mu.Lock()
	defer s.mu.Unlock()
	contents, sum, err := s.read()
	if sum == s.last {
		return
	}
	s.last = sum
	if err == nil {
		err = s.apply(contents)
	}
	if err != nil {
		s.log.Error("reloading "+s.what+" failed, keeping the previous one", zap.Strings("files", s.files), zap.Error(err))
		return
	}
	s.log.Info("reloaded "+s.what, zap.Strings("files", s.files))
}

func (s *fileSource) run(ctx context.Context) {
	var events <-chan fsnotify.Event
	var errs <-chan error
	w, err := fsnotify.NewWatcher()
	if err != nil {
		s.log.Warn("cannot watch files, polling only", zap.Strings("files", s.files), zap.Error(err))
	} else {
		defer w.Close()
		s.watch(w, true)
		events, errs = w.Events, w.Errors
	}
	// Catch changes made between the initial load and the watch starting.
	s.check()

	tick := time.NewTicker(recheckInterval)
	defer tick.Stop()
	var settle <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-events:
			if !ok {
				events = nil
			} else if settle == nil {
				settle = time.After(settleDelay)
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
			} else {
				s.log.Warn("file watch error", zap.Strings("files", s.files), zap.Error(err))
			}
		case <-settle:
			settle = nil
			s.check()
		case <-tick.C:
			if w != nil {
				s.watch(w, false)
			}
			s.check()
		}
	}
}

// watch adds the directories holding the files, not the files: atomic
// renames and Kubernetes' symlink swaps replace the file, which would end a
// watch on the file itself. The resolved target's directory is added too, for
// files that are symlinks to a file edited elsewhere. Any event in these
// directories triggers a check; the content digest filters out noise.
// Re-adding on every tick restores watches lost when a directory was
// replaced.
func (s *fileSource) watch(w *fsnotify.Watcher, initial bool) {
	seen := map[string]bool{}
	for _, f := range s.files {
		dirs := []string{filepath.Dir(f)}
		if target, err := filepath.EvalSymlinks(f); err == nil {
			dirs = append(dirs, filepath.Dir(target))
		}
		for _, d := range dirs {
			if seen[d] {
				continue
			}
			seen[d] = true
			if err := w.Add(d); err != nil {
				if initial {
					s.log.Warn("cannot watch directory, relying on periodic checks", zap.String("dir", d), zap.Error(err))
				} else {
					s.log.Debug("cannot watch directory", zap.String("dir", d), zap.Error(err))
				}
			}
		}
	}
}

func orNop(log *zap.Logger) *zap.Logger {
	if log == nil {
		return zap.NewNop()
	}
	return log
}
