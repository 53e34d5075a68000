package tokenfile

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
)

// pollInterval is how often the file's mtime and size are checked.
const pollInterval = time.Second

// Authenticator looks bearer tokens up in the file's table.
type Authenticator struct {
	path     string
	interval time.Duration
	table    atomic.Pointer[table]
}

// table is one parse of the file, with the stat it was read at.
type table struct {
	users   map[string]*request.User
	modTime time.Time
	size    int64
}

var (
	_ auth.Authenticator   = (*Authenticator)(nil)
	_ pipeline.Provisioner = (*Authenticator)(nil)
)

// New reads path, so a bad file fails the start (and `config validate`).
func New(path string) (*Authenticator, error) {
	a := &Authenticator{path: path, interval: pollInterval}
	t, _, err := load(path)
	if err != nil {
		return nil, err
	}
	a.table.Store(t)
	return a, nil
}

// Provision implements pipeline.Provisioner: it logs the file's warnings
// and polls it until the instance is closed.
func (a *Authenticator) Provision(env *pipeline.Env) error {
	log := env.Log
	if log == nil {
		log = zap.NewNop()
	}
	// Re-read: the file may have changed since New.
	t, warnings, err := load(a.path)
	if err != nil {
		return err
	}
	a.table.Store(t)
	for _, w := range warnings {
		log.Warn(w)
	}
	if env.Context != nil {
		go a.poll(env.Context.Done(), log)
	}
	return nil
}

// poll reloads the table when the file's mtime or size changes. A file
// that does not parse (or vanished) leaves the old table serving.
func (a *Authenticator) poll(done <-chan struct{}, log *zap.Logger) {
	tick := time.NewTicker(a.interval)
	defer tick.Stop()
	var missing bool       // the file's absence was logged
	var failed os.FileInfo // the stat whose parse failed, not retried
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		fi, err := os.Stat(a.path)
		if err != nil {
			if !missing {
				log.Error("token file unreadable; keeping the tokens loaded", zap.String("file", a.path), zap.Error(err))
			}
			missing = true
			continue
		}
		missing = false
		cur := a.table.Load()
		if sameStat(fi, cur.modTime, cur.size) || (failed != nil && sameStat(fi, failed.ModTime(), failed.Size())) {
			continue
		}
		t, warnings, err := load(a.path)
		if err != nil {
			log.Error("token file does not parse; keeping the tokens loaded", zap.String("file", a.path), zap.Error(err))
			failed = fi
			continue
		}
		failed = nil
		for _, w := range warnings {
			log.Warn(w)
		}
		a.table.Store(t)
		log.Info("token file reloaded", zap.String("file", a.path), zap.Int("tokens", len(t.users)))
	}
}

func sameStat(fi os.FileInfo, modTime time.Time, size int64) bool {
	return fi.ModTime().Equal(modTime) && fi.Size() == size
}

// AuthenticateRequest implements auth.Authenticator. A bearer token not
// in the file is ok=false, so other authenticators may try it; if none
// recognises it, the stage answers 401.
func (a *Authenticator) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	tok, ok := auth.BearerToken(r)
	if !ok {
		return nil, false, nil
	}
	u, ok := a.table.Load().users[tok]
	if !ok {
		return nil, false, nil
	}
	c := *u
	c.Groups = append([]string(nil), u.Groups...)
	return &c, true, nil
}

// load reads and parses the file, stat first so a write racing the read
// is picked up by the next poll.
func load(path string) (*table, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("token file: %w", err)
	}
	users, warnings, err := parse(path, f)
	if err != nil {
		return nil, nil, err
	}
	return &table{users: users, modTime: fi.ModTime(), size: fi.Size()}, warnings, nil
}

// parse reads kube's static token CSV: token,user,uid[,"group1,group2"].
// Blank lines and lines starting with # are skipped. An empty token is
// skipped and a duplicate one overrides, each with a warning, as in kube.
func parse(name string, r io.Reader) (map[string]*request.User, []string, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.Comment = '#'
	users := map[string]*request.User{}
	var warnings []string
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, nil, fmt.Errorf("token file %s:%d: %v", name, pe.Line, pe.Err)
			}
			return nil, nil, fmt.Errorf("token file %s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // a line of blanks
		}
		if len(rec) < 3 {
			return nil, nil, fmt.Errorf("token file %s:%d: must have at least 3 columns (token, user name, user uid), found %d", name, line, len(rec))
		}
		if rec[0] == "" {
			warnings = append(warnings, fmt.Sprintf("token file %s:%d: empty token, skipped", name, line))
			continue
		}
		if rec[1] == "" {
			return nil, nil, fmt.Errorf("token file %s:%d: empty user name", name, line)
		}
		if _, dup := users[rec[0]]; dup {
			warnings = append(warnings, fmt.Sprintf("token file %s:%d: duplicate token, this line wins", name, line))
		}
		u := &request.User{Name: rec[1], UID: rec[2]}
		if len(rec) >= 4 {
			for _, g := range strings.Split(rec[3], ",") {
				if g != "" {
					u.Groups = append(u.Groups, g)
				}
			}
		}
		users[rec[0]] = u
	}
	return users, warnings, nil
}
