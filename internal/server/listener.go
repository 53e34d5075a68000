package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// listen binds addr, with SO_REUSEPORT and SO_REUSEADDR when asked, so
// two processes can share a port as kube's --permit-port-sharing allows.
func listen(ctx context.Context, addr string, reusePort, reuseAddr bool) (net.Listener, error) {
	lc := net.ListenConfig{
		KeepAlive: 3 * time.Minute,
		Control: func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				if reuseAddr {
					serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
				}
				if serr == nil && reusePort {
					serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
				}
			})
			if err != nil {
				return err
			}
			return serr
		},
	}
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		switch {
		case errors.Is(err, syscall.EADDRINUSE):
			return nil, fmt.Errorf("cannot listen on %s: the address is already in use (is another apiserver running?)", addr)
		case errors.Is(err, syscall.EACCES):
			return nil, fmt.Errorf("cannot listen on %s: permission denied (ports below 1024 need privileges)", addr)
		case errors.Is(err, syscall.EADDRNOTAVAIL):
			return nil, fmt.Errorf("cannot listen on %s: the address is not on this host", addr)
		}
		return nil, fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	return ln, nil
}

// checkStateDir makes sure the state directory exists and is writable, so
// a read-only or misowned directory fails with its name at start instead
// of as an odd error from the PKI or etcd.
func checkStateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("state directory %s: cannot be created: %w", dir, unwrapPath(err))
	}
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return fmt.Errorf("state directory %s: is not writable: %w", dir, unwrapPath(err))
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return nil
}

// unwrapPath drops the path from a *PathError whose message already names it.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
