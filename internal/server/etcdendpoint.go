package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// EtcdEndpointFile, under stateDir, holds the embedded etcd's client URL
// while the server runs. The embedded etcd listens on a free loopback
// port, so tools on the same host (apiserver-bench's bare-etcd baseline,
// etcdctl) read it here. External etcd has its endpoints in the config, so
// no file is written then.
const EtcdEndpointFile = "etcd.endpoint"

func (s *Server) writeEtcdEndpoint() error {
	if !s.backend.Embedded {
		return nil
	}
	p := filepath.Join(s.cfg.StateDir, EtcdEndpointFile)
	// Written then renamed, so a reader never sees half a URL.
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(s.backend.Endpoints, ",")+"\n"), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	return nil
}

// removeEtcdEndpoint drops the file once the embedded etcd is gone, so no
// tool dials a port that may belong to someone else by then.
func (s *Server) removeEtcdEndpoint() {
	if s.backend == nil || !s.backend.Embedded {
		return
	}
	if err := os.Remove(filepath.Join(s.cfg.StateDir, EtcdEndpointFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("removing " + EtcdEndpointFile)
	}
}
