package server

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/kpipe/kpipe/config"
)

func TestPortSharing(t *testing.T) {
	cases := []struct {
		name      string
		reusePort bool
		wantErr   string
	}{
		{name: "refused without sharing", wantErr: "the address is already in use"},
		{name: "shared with SO_REUSEPORT", reusePort: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			first, err := listen(context.Background(), "127.0.0.1:0", c.reusePort, false)
			if err != nil {
				t.Fatal(err)
			}
			defer first.Close()
			second, err := listen(context.Background(), first.Addr().String(), c.reusePort, false)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("second listen: %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("second listen on a shared port: %v", err)
			}
			second.Close()
		})
	}
}

func TestAddressSharingAllowsRebindAfterClose(t *testing.T) {
	ln, err := listen(context.Background(), "127.0.0.1:0", false, true)
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	// Leave a connection in TIME_WAIT, which SO_REUSEADDR lets a new
	// listener ignore.
	conn, err := net.Dial("tcp", addr)
	if err == nil {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
		conn.Close()
	}
	ln.Close()
	again, err := listen(context.Background(), addr, false, true)
	if err != nil {
		t.Fatalf("rebind with SO_REUSEADDR: %v", err)
	}
	again.Close()
}

func TestCheckStateDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, dir, want string
	}{
		{name: "created", dir: filepath.Join(t.TempDir(), "a", "b")},
		{name: "under a file", dir: filepath.Join(file, "x"), want: "cannot be created: not a directory"},
		{name: "is a file", dir: file, want: "state directory " + file},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkStateDir(c.dir)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestAdvertiseAddress(t *testing.T) {
	cfg := config.Default()
	cfg.Server.AdvertiseAddress = "192.0.2.10"
	if ip := advertiseAddress(cfg, zap.NewNop()); ip.String() != "192.0.2.10" {
		t.Errorf("configured address ignored: %v", ip)
	}
	cfg.Server.AdvertiseAddress = ""
	ip := advertiseAddress(cfg, zap.NewNop())
	if ip == nil || ip.IsUnspecified() {
		t.Errorf("no usable default advertise address: %v", ip)
	}
}
