package bench

// The floor: the least any Go API server can do for a create or a get on
// this machine. It is a TLS HTTP/2 server configured as kpipe's listener
// that, for a create, runs the one etcd transaction a create is at heart on
// an etcd embedded in its own process (called in process, as kpipe calls
// its embedded etcd), and answers a get from memory, as a watch cache
// does. No authentication, admission, defaulting, field manager or
// encoding: kpipe's ratio to it is what all of that costs.
//
// It runs as a child process, a re-exec of the running binary, so that its
// CPU and garbage collector are apart from the load generator's, as a real
// server's are. A binary that runs the bench with Options.Floor calls
// ServeFloorIfChild first thing in main (and in TestMain).

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"go.uber.org/zap"
	"golang.org/x/net/http2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// floorEnv, in a child's environment, holds the data dir of the floor
// server it is to be.
const floorEnv = "KPIPE_BENCH_FLOOR_DIR"

// floorStartTimeout bounds the child's start: etcd, certificate, listener.
const floorStartTimeout = time.Minute

// ServeFloorIfChild returns at once unless this process was started by
// Run as the floor server; then it serves until its parent closes its
// stdin (or it gets SIGTERM) and exits.
func ServeFloorIfChild() {
	dir := os.Getenv(floorEnv)
	if dir == "" {
		return
	}
	err := serveFloor(dir, os.Stdin, os.Stdout)
	// The parent removes the dir too; this covers a parent that was killed.
	os.RemoveAll(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// floorHello is the child's one line to its parent once it serves.
type floorHello struct {
	URL string `json:"url"`
	CA  string `json:"ca"` // PEM of the self-signed serving certificate
}

// serveFloor starts etcd in dir and the server, writes the hello to out,
// and stops when in ends or on SIGTERM.
func serveFloor(dir string, in io.Reader, out io.Writer) error {
	// ^C reaches the whole process group; the parent stops its child.
	signal.Ignore(os.Interrupt)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)

	ecfg := embed.NewConfig()
	ecfg.Name = "default"
	ecfg.Dir = dir
	local := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	ecfg.ListenClientUrls = []url.URL{local}
	ecfg.AdvertiseClientUrls = []url.URL{local}
	ecfg.ListenPeerUrls = []url.URL{local}
	ecfg.AdvertisePeerUrls = []url.URL{local}
	ecfg.InitialCluster = ecfg.InitialClusterFromName(ecfg.Name)
	ecfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(ecfg)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return fmt.Errorf("etcd: %w", err)
	case <-time.After(floorStartTimeout):
		return errors.New("etcd did not become ready")
	}
	// In process, as kpipe's backend calls its embedded etcd.
	cli := v3client.New(e.Server)
	defer cli.Close()

	cert, caPEM, err := selfSignedCert()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	// As internal/server's listener with apiserver.yaml's defaults.
	srv := &http.Server{
		Handler: &floorServer{kv: cli, objs: map[string][]byte{}},
		TLSConfig: &tls.Config{
			MinVersion:   tls.VersionTLS12,
			NextProtos:   []string{"h2", "http/1.1"},
			Certificates: []tls.Certificate{cert},
			ClientAuth:   tls.RequestClientCert,
		},
		MaxHeaderBytes:    1 << 20,
		IdleTimeout:       90 * time.Second,
		ReadHeaderTimeout: 32 * time.Second,
	}
	const streams = 1000
	if err := http2.ConfigureServer(srv, &http2.Server{
		MaxConcurrentStreams:         streams,
		IdleTimeout:                  90 * time.Second,
		MaxUploadBufferPerStream:     256 << 10,
		MaxUploadBufferPerConnection: streams * (256 << 10) / 4,
	}); err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(ln, "", "") }()
	defer srv.Close()

	hello, _ := json.Marshal(floorHello{URL: "https://" + ln.Addr().String(), CA: string(caPEM)})
	if _, err := fmt.Fprintf(out, "%s\n", hello); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, in)
		close(done)
	}()
	select {
	case <-done:
	case <-term:
	case err := <-served:
		return err
	}
	return nil
}

// selfSignedCert is an ECDSA P-256 certificate for 127.0.0.1, its own CA.
func selfSignedCert() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "kpipe-bench floor"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// floorPrefix is the floor's etcd key prefix; the key is this plus the
// object's URL path.
const floorPrefix = "/floor"

// floorServer answers what the create and get workloads send: POST to a
// collection creates metadata.name under it, GET of an object reads it,
// DELETE of an object removes it and DELETE of anything else removes the
// whole collection under that path (the label selector is not read: the
// floor's etcd holds only the bench's objects). Bodies are stored and
// returned as sent.
type floorServer struct {
	kv   clientv3.KV
	mu   sync.RWMutex
	objs map[string][]byte // URL path → body
}

func (f *floorServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		f.create(w, r)
	case http.MethodGet:
		f.mu.RLock()
		b, ok := f.objs[r.URL.Path]
		f.mu.RUnlock()
		if !ok {
			floorStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, r.URL.Path+" not found")
			return
		}
		floorWrite(w, http.StatusOK, b)
	case http.MethodDelete:
		f.delete(w, r)
	default:
		floorStatus(w, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, r.Method+" is not supported by the floor")
	}
}

func (f *floorServer) create(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		floorStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error())
		return
	}
	var m struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &m); err != nil || m.Metadata.Name == "" || strings.Contains(m.Metadata.Name, "/") {
		floorStatus(w, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "metadata.name: a name is required")
		return
	}
	p := strings.TrimSuffix(r.URL.Path, "/") + "/" + m.Metadata.Name
	key := floorPrefix + p
	resp, err := f.kv.Txn(r.Context()).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(body))).
		Commit()
	switch {
	case err != nil:
		floorStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, err.Error())
		return
	case !resp.Succeeded:
		floorStatus(w, http.StatusConflict, metav1.StatusReasonAlreadyExists, p+" already exists")
		return
	}
	f.mu.Lock()
	f.objs[p] = body
	f.mu.Unlock()
	floorWrite(w, http.StatusCreated, body)
}

func (f *floorServer) delete(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	f.mu.RLock()
	b, one := f.objs[p]
	f.mu.RUnlock()
	var err error
	if one {
		_, err = f.kv.Delete(r.Context(), floorPrefix+p)
	} else {
		p = strings.TrimSuffix(p, "/") + "/"
		_, err = f.kv.Delete(r.Context(), floorPrefix+p, clientv3.WithPrefix())
	}
	if err != nil {
		floorStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, err.Error())
		return
	}
	f.mu.Lock()
	if one {
		delete(f.objs, p)
	} else {
		for k := range f.objs {
			if strings.HasPrefix(k, p) {
				delete(f.objs, k)
			}
		}
	}
	f.mu.Unlock()
	if !one {
		b, _ = json.Marshal(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess})
	}
	floorWrite(w, http.StatusOK, b)
}

func floorWrite(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

func floorStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	b, _ := json.Marshal(metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: msg, Reason: reason, Code: int32(code),
	})
	floorWrite(w, code, b)
}

// floorProc is a running floor child, seen from its parent.
type floorProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	dir    string
	stderr bytes.Buffer // read only after the child has exited
	exited chan struct{}
	config *rest.Config
	url    string
}

// startFloor starts the running binary again as the floor server on a
// fresh data dir and waits for it to serve. stop ends it and removes the
// dir, also when start fails.
func startFloor(ctx context.Context) (*floorProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kpipe-bench-floor-*")
	if err != nil {
		return nil, err
	}
	f := &floorProc{dir: dir, exited: make(chan struct{})}
	f.cmd = exec.Command(exe)
	f.cmd.Env = append(os.Environ(), floorEnv+"="+dir)
	f.cmd.Stderr = &f.stderr
	// Through an io.Pipe, so that Wait returns only once the child's
	// output has been read.
	stdout, pw := io.Pipe()
	f.cmd.Stdout = pw
	f.stdin, err = f.cmd.StdinPipe()
	if err == nil {
		err = f.cmd.Start()
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	go func() {
		_ = f.cmd.Wait()
		pw.Close()
		close(f.exited)
	}()

	hello := make(chan floorHello, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadBytes('\n')
		var h floorHello
		_ = json.Unmarshal(line, &h)
		hello <- h
		_, _ = io.Copy(io.Discard, stdout)
	}()
	fail := func(err error) (*floorProc, error) {
		f.stop()
		if msg := strings.TrimSpace(f.stderr.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return nil, err
	}
	select {
	case h := <-hello:
		if h.URL == "" {
			return fail(errors.New("the floor server exited before serving"))
		}
		f.url = h.URL
		f.config = &rest.Config{Host: h.URL, TLSClientConfig: rest.TLSClientConfig{CAData: []byte(h.CA)}}
		return f, nil
	case <-ctx.Done():
		return fail(ctx.Err())
	case <-time.After(floorStartTimeout):
		return fail(errors.New("the floor server did not start in time"))
	}
}

// stop closes the child's stdin, which ends it, kills it if it has not
// exited after a while, and removes its data dir.
func (f *floorProc) stop() {
	_ = f.stdin.Close()
	select {
	case <-f.exited:
	case <-time.After(15 * time.Second):
		_ = f.cmd.Process.Kill()
		<-f.exited
	}
	os.RemoveAll(f.dir)
}
