package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"gopkg.in/natefinch/lumberjack.v2"

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

	webhook *webhook // nil: no webhook backend
	// closeBound is how long Close waits for the webhook's buffer to drain.
	closeBound time.Duration

	events   prometheus.Counter
	errors   *prometheus.CounterVec
	levels   *prometheus.CounterVec
	rejected prometheus.Counter
}

var (
	_ pipeline.Stage       = (*Stage)(nil)
	_ pipeline.Provisioner = (*Stage)(nil)
	_ pipeline.Closer      = (*Stage)(nil)
	_ pipeline.Publisher   = (*Stage)(nil)
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

// Provision implements pipeline.Provisioner: it opens the log and watches
// the policy file.
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
	s.rejected = pipeline.Register(env, prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "apiserver", Subsystem: "audit", Name: "requests_rejected_total",
		Help: "Counter of apiserver requests rejected due to an error in audit logging backend.",
	}))
	if s.policy.Load() == nil {
		return nil
	}
	switch s.cfg.LogPath {
	case "":
	case "-":
		s.out = os.Stdout
	default:
		lj := &lumberjack.Logger{Filename: s.cfg.LogPath, MaxSize: s.cfg.MaxSize, MaxBackups: s.cfg.MaxBackup, MaxAge: s.cfg.MaxAge}
		s.out, s.cl = lj, lj
	}
	if s.cfg.Webhook.enabled() {
		s.closeBound = defaultCloseBound
		if env.Server != nil && env.Server.Server.ShutdownTimeout > 0 {
			s.closeBound = env.Server.Server.ShutdownTimeout
		}
		wh, err := newWebhook(&s.cfg.Webhook, s.errors, s.log.With(zap.String("backend", pluginWebhook)), nil)
		if err != nil {
			return err
		}
		s.webhook = wh
	}
	if s.cfg.PolicyFile != "" {
		go s.watchPolicy(env)
	}
	return nil
}

// Publish implements pipeline.Publisher: the stage records the requests
// the authentication stage of its generation refuses.
func (s *Stage) Publish(sv *pipeline.Services) { sv.AuthFailures = s }

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

// eventPrefix starts every event line; the webhook's items go without it.
var eventPrefix = []byte(`{"kind":"Event","apiVersion":"` + GroupVersion + `",`)

// emit hands one event, as its JSON line, to the backends: the log and the
// webhook, as kube's union of backends. hookLine is the line the webhook
// gets (truncated, or nil when too large). It reports false when a
// blocking-strict webhook could not take the event.
func (s *Stage) emit(line, hookLine []byte, err error) bool {
	s.events.Inc()
	if err != nil {
		s.errors.WithLabelValues(pluginLog).Inc()
		s.log.Warn("encoding an audit event", zap.Error(err))
		return true
	}
	if s.out != nil {
		s.mu.Lock()
		_, err = s.out.Write(append(line, '\n'))
		s.mu.Unlock()
		if err != nil {
			s.errors.WithLabelValues(pluginLog).Inc()
			s.log.Warn("writing an audit event", zap.Error(err))
		}
	}
	if s.webhook != nil && bytes.HasPrefix(hookLine, eventPrefix) {
		item := make([]byte, 0, len(hookLine)-len(eventPrefix)+1)
		item = append(append(item, '{'), hookLine[len(eventPrefix):]...)
		return s.webhook.process(item)
	}
	return true
}

// truncatedAnnotation marks an event the webhook got without its bodies.
const truncatedAnnotation = "audit.k8s.io/truncated"

// webhookLine is kube's truncate backend in front of the webhook: an event
// larger than truncateMaxEventSize (as encoded, with its newline) loses
// its requestObject and responseObject and is annotated
// audit.k8s.io/truncated; one still too large is dropped and counted in
// apiserver_audit_error_total{plugin="truncate"}. It runs under the
// record's lock.
func (s *Stage) webhookLine(ev *Event, line []byte) []byte {
	c := &s.cfg.Webhook
	if s.webhook == nil || !c.TruncateEnabled {
		return line
	}
	if int64(len(line)+1) > c.TruncateMaxEventSize && !ev.Level.Less(LevelRequest) {
		t := *ev
		t.RequestObject, t.ResponseObject = nil, nil
		t.Annotations = maps.Clone(ev.Annotations)
		if t.Annotations == nil {
			t.Annotations = map[string]string{}
		}
		t.Annotations[truncatedAnnotation] = "true"
		b, err := json.Marshal(&t)
		if err != nil {
			s.webhook.failed(pluginTruncate, err, 1)
			return nil
		}
		line = b
	}
	if int64(len(line)+1) > c.TruncateMaxEventSize {
		s.webhook.failed(pluginTruncate, errors.New("event is too large even after truncating"), 1)
		return nil
	}
	return line
}

// defaultCloseBound is how long Close waits for the webhook without a
// server config.
const defaultCloseBound = time.Minute

// Close implements pipeline.Closer. The webhook's buffer is sent first,
// within the server's shutdownTimeout: a reload closes a replaced stage
// once its requests are done, and its buffered events still go out.
func (s *Stage) Close() error {
	if s.webhook != nil {
		s.webhook.Close(s.closeBound)
	}
	if s.cl != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.cl.Close()
	}
	return nil
}
