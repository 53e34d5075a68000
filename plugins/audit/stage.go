package audit

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Stage is the audit stage instance.
type Stage struct {
	cfg    *Config
	policy atomic.Pointer[Policy] // nil: audit is off
	log    *zap.Logger

	mu  sync.Mutex // one line at a time
	out io.Writer
	cl  io.Closer

	failures *auth.FailureHook
	events   prometheus.Counter
	errors   *prometheus.CounterVec
	levels   *prometheus.CounterVec
}

var (
	_ pipeline.Stage       = (*Stage)(nil)
	_ pipeline.Provisioner = (*Stage)(nil)
	_ pipeline.Closer      = (*Stage)(nil)
)

// policyPoll is how often the policy file is checked for changes.
const policyPoll = time.Second

func newStage(c *Config) *Stage {
	s := &Stage{cfg: c, log: zap.NewNop()}
	if c.policy != nil {
		s.policy.Store(c.policy)
	}
	return s
}

// Provision implements pipeline.Provisioner: it opens the log, offers the
// authentication stage its failure hook and watches the policy file.
func (s *Stage) Provision(env *pipeline.Env) error {
	s.log = env.Log
	// kube's names (k8s.io/apiserver/pkg/audit/metrics.go).
	s.events = pipeline.Register(env, prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "apiserver", Subsystem: "audit", Name: "event_total",
		Help: "Counter of audit events generated and sent to the audit backend.",
	}))
	s.errors = pipeline.Register(env, prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "apiserver", Subsystem: "audit", Name: "error_total",
		Help: "Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.",
	}, []string{"plugin"}))
	s.levels = pipeline.Register(env, prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "apiserver", Subsystem: "audit", Name: "level_total",
		Help: "Counter of policy levels for audit events (1 per request).",
	}, []string{"level"}))
	if s.policy.Load() == nil {
		return nil
	}
	if s.cfg.LogPath == "-" {
		s.out = os.Stdout
	} else {
		lj := &lumberjack.Logger{Filename: s.cfg.LogPath, MaxSize: s.cfg.MaxSize, MaxBackups: s.cfg.MaxBackup, MaxAge: s.cfg.MaxAge}
		s.out, s.cl = lj, lj
	}
	if env.Shared != nil {
		s.failures = env.Shared.AuthFailures
		s.failures.Set(s)
	}
	if s.cfg.PolicyFile != "" {
		go s.watchPolicy(env)
	}
	return nil
}

// watchPolicy re-reads the policy file when its size or time changes; a
// bad file is logged and the policy in force stays.
func (s *Stage) watchPolicy(env *pipeline.Env) {
	stat := func() (time.Time, int64) {
		fi, err := os.Stat(s.cfg.PolicyFile)
		if err != nil {
			return time.Time{}, -1
		}
		return fi.ModTime(), fi.Size()
	}
	mod, size := stat()
	t := time.NewTicker(policyPoll)
	defer t.Stop()
	for {
		select {
		case <-env.Context.Done():
			return
		case <-t.C:
		}
		m, sz := stat()
		if sz < 0 || (m.Equal(mod) && sz == size) {
			continue
		}
		mod, size = m, sz
		data, err := os.ReadFile(s.cfg.PolicyFile)
		if err != nil {
			s.log.Warn("audit policy not reloaded", zap.String("policyFile", s.cfg.PolicyFile), zap.Error(err))
			continue
		}
		p, warning, err := ParsePolicy(data)
		if err != nil {
			s.log.Warn("audit policy not reloaded", zap.String("policyFile", s.cfg.PolicyFile), zap.Error(err))
			continue
		}
		if warning != nil {
			s.log.Warn("audit policy", zap.String("policyFile", s.cfg.PolicyFile), zap.Error(warning))
		}
		s.policy.Store(p)
		s.log.Info("audit policy reloaded", zap.String("policyFile", s.cfg.PolicyFile), zap.Int("rules", len(p.Rules)))
	}
}

// write appends one event line.
func (s *Stage) write(line []byte, err error) {
	if err == nil && s.out != nil {
		s.mu.Lock()
		_, err = s.out.Write(append(line, '\n'))
		s.mu.Unlock()
	}
	if err != nil {
		s.errors.WithLabelValues("log").Inc()
		s.log.Warn("writing an audit event", zap.Error(err))
		return
	}
	s.events.Inc()
}

// Close implements pipeline.Closer.
func (s *Stage) Close() error {
	s.failures.Clear(s)
	if s.cl != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.cl.Close()
	}
	return nil
}
