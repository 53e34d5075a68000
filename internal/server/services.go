package server

import (
	"fmt"
	"net"
	"strconv"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/api/servicealloc"
)

// attachServiceAllocator gives the services resource its IP and node port
// allocation, kept in etcd beside the objects.
func (s *Server) attachServiceAllocator() error {
	cidr, err := config.ServiceCIDR(s.cfg.Services.ClusterIPRange)
	if err != nil {
		return fmt.Errorf("services.clusterIPRange: %w", err)
	}
	lo, hi, err := config.PortRange(s.cfg.Services.NodePortRange)
	if err != nil {
		return fmt.Errorf("services.nodePortRange: %w", err)
	}
	alloc, err := servicealloc.New(s.backend.Client, s.cfg.Storage.Prefix, cidr, lo, hi)
	if err != nil {
		return fmt.Errorf("services.clusterIPRange: %w", err)
	}
	if res, ok := s.resources.Lookup("", "v1", "services"); ok {
		res.Hooks = alloc
	}
	return nil
}

// securePort is the port the listener serves on (a test's listener may
// have picked a free one).
func (s *Server) securePort() int {
	if s.ln != nil {
		if _, p, err := net.SplitHostPort(s.ln.Addr().String()); err == nil {
			if n, err := strconv.Atoi(p); err == nil {
				return n
			}
		}
	}
	return s.cfg.Server.SecurePort
}
