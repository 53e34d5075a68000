package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/server/healthz"
)

// Options configure an Engine.
type Options struct {
	Registry *Registry
	Log      *zap.Logger
	Metrics  prometheus.Registerer
	// Context ends at shutdown; plugins get it in Env.
	Context context.Context
	// Shared is handed to plugins in Env.
	Shared *Shared
	// Next serves what the terminal stage passes on: the non-resource
	// endpoints (health, version, metrics, discovery, /debug/pipeline).
	Next http.Handler
	// OnProvision and OnClose are told of every instance provisioned and
	// closed, nested ones included: the server runs and retires their
	// post-start hooks. They are called with the engine's lock held and
	// must not call back into the engine.
	OnProvision func(*Instance)
	OnClose     func(*Instance)
	// Tracer, when set, makes each request a span with a child span per
	// stage. Nil builds chains with no tracing code in them at all.
	Tracer trace.Tracer
}

// Engine serves requests through the active pipeline generation and swaps
// generations atomically on reload.
type Engine struct {
	opts    Options
	metrics *metrics

	mu   sync.Mutex           // serialises Apply and instance refcounts
	live map[string]*Instance // provisioned instances by reuse key
	gen  int64
	cur  atomic.Pointer[generation]

	// retiring counts the generations a reload retired whose instances
	// are not closed yet; Close waits for them. closed (under mu) refuses
	// reloads once Close has begun, so none adds to it while Close waits.
	retiring sync.WaitGroup
	closed   bool
}

// generation is one built pipeline.
type generation struct {
	id        int64
	handler   http.Handler
	stages    []*Instance
	instances []*Instance // every instance, nested ones included
	cfg       *config.Config

	inflight atomic.Int64
	retired  atomic.Bool
	drained  chan struct{}
	once     sync.Once
}

func (g *generation) done() {
	if g.inflight.Add(-1) == 0 && g.retired.Load() {
		g.once.Do(func() { close(g.drained) })
	}
}

// NewEngine returns an engine with no pipeline: it answers 503 until the
// first Apply.
func NewEngine(o Options) *Engine {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Context == nil {
		o.Context = context.Background()
	}
	if o.Next == nil {
		o.Next = http.NotFoundHandler()
	}
	return &Engine{opts: o, metrics: newMetrics(o.Metrics), live: map[string]*Instance{}}
}

// Apply provisions the plan's stages (reusing unchanged instances from the
// running generation), publishes the new generation's services, swaps it
// in, and retires the old one: it finishes its in-flight requests, then the
// instances no generation uses any more are closed. On error the running
// generation keeps serving, and its services stay published.
func (e *Engine) Apply(p *Plan, cfg *config.Config) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errEngineClosed
	}

	var fresh []*Instance
	stages := make([]*Instance, len(p.Stages))
	for i, s := range p.Stages {
		in, err := e.provision(s, cfg, &fresh)
		if err != nil {
			for _, f := range fresh {
				e.closeInstance(f)
			}
			return err
		}
		stages[i] = in
	}

	e.gen++
	g := &generation{id: e.gen, stages: stages, cfg: cfg, drained: make(chan struct{})}
	walk(stages, func(in *Instance) {
		in.refs++
		e.live[in.key] = in
		g.instances = append(g.instances, in)
	})
	g.handler = e.chain(g)

	// Published before the swap: a request of the old generation may meet
	// the new services, one of the new generation never meets the old.
	e.publish(g)
	old := e.cur.Swap(g)
	e.metrics.generation.Set(float64(g.id))
	if e.opts.OnProvision != nil {
		for _, in := range fresh {
			e.opts.OnProvision(in)
		}
	}
	if old != nil {
		e.retiring.Add(1)
		go func() {
			defer e.retiring.Done()
			e.retire(old)
		}()
	}
	return nil
}

// publish puts the services g's instances offer in the shared holders and
// withdraws those none offers, so nothing outside the pipeline answers from
// an instance that does not serve. A nil g withdraws everything. Called
// only for a generation that serves: a failed build publishes nothing.
func (e *Engine) publish(g *generation) {
	sh := e.opts.Shared
	if sh == nil {
		return
	}
	var sv Services
	if g != nil {
		for _, in := range g.instances {
			if p, ok := in.Value.(Publisher); ok {
				p.Publish(&sv)
			}
		}
	}
	sh.Authorizer.Set(sv.Authorizer)
	sh.Authenticator.Set(sv.Authenticator)
	sh.AuthFailures.Set(sv.AuthFailures)
}

// provision returns the live instance with in's key, or provisions in (and
// its nested instances first).
func (e *Engine) provision(in *Instance, cfg *config.Config, fresh *[]*Instance) (*Instance, error) {
	if live, ok := e.live[in.key]; ok {
		return live, nil
	}
	for key, children := range in.Nested {
		for i, c := range children {
			pc, err := e.provision(c, cfg, fresh)
			if err != nil {
				return nil, err
			}
			children[i] = pc
		}
		in.Nested[key] = children
	}
	in.ctx, in.cancel = context.WithCancel(e.opts.Context)
	if pv, ok := in.Value.(Provisioner); ok {
		env := &Env{
			Log:     e.opts.Log.Named(in.Plugin.Name),
			Metrics: e.opts.Metrics,
			Server:  cfg,
			Context: in.ctx,
			Shared:  e.opts.Shared,
			nested:  in.Nested,
		}
		if err := pv.Provision(env); err != nil {
			in.cancel()
			return nil, fmt.Errorf("%s: %w", in.Label, err)
		}
	}
	*fresh = append(*fresh, in)
	return in, nil
}

// retire waits for g's in-flight requests, then releases its instances.
func (e *Engine) retire(g *generation) {
	g.retired.Store(true)
	if g.inflight.Load() == 0 {
		g.once.Do(func() { close(g.drained) })
	}
	<-g.drained
	e.release(g)
}

// release drops g's claims on its instances and closes those no
// generation uses any more. They are closed after the engine's lock is
// released: a Close may take its time (an audit backend sending what it
// buffered) and must not hold up reloads or requests meanwhile.
func (e *Engine) release(g *generation) {
	e.mu.Lock()
	var closing []*Instance
	for _, in := range g.instances {
		in.refs--
		if in.refs == 0 {
			delete(e.live, in.key)
			if in.holds > 0 {
				in.closePending = true // a detached request is still inside it
				continue
			}
			closing = append(closing, in)
		}
	}
	e.mu.Unlock()
	for _, in := range closing {
		e.closeInstance(in)
	}
}

func (e *Engine) closeInstance(in *Instance) {
	if in.cancel != nil {
		in.cancel()
	}
	if e.opts.OnClose != nil {
		e.opts.OnClose(in)
	}
	if c, ok := in.Value.(Closer); ok {
		if err := c.Close(); err != nil {
			e.opts.Log.Warn("closing plugin failed", zap.String("plugin", in.Label), zap.Error(err))
		}
	}
}

// errEngineClosed refuses a reload that comes after Close began.
var errEngineClosed = errors.New("pipeline: the server is shutting down")

// Close drains and releases the active generation. The server calls it
// after the listener has shut down.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	g := e.cur.Swap(nil)
	if g == nil {
		return nil
	}
	g.retired.Store(true)
	if g.inflight.Load() == 0 {
		g.once.Do(func() { close(g.drained) })
	}
	select {
	case <-g.drained:
	case <-ctx.Done():
		return errors.New("pipeline: requests still in flight at close")
	}
	e.publish(nil) // its instances are about to close
	e.release(g)
	// Generations retired by a reload close their instances too (an
	// audit backend sends what it buffered) before the server exits.
	retired := make(chan struct{})
	go func() {
		e.retiring.Wait()
		close(retired)
	}()
	select {
	case <-retired:
	case <-ctx.Done():
		return errors.New("pipeline: instances of a retired pipeline still closing at close")
	}
	return nil
}

// Generation is the id of the active pipeline.
func (e *Engine) Generation() int64 {
	if g := e.cur.Load(); g != nil {
		return g.id
	}
	return 0
}

// HealthChecks are the checks of the active generation's instances.
func (e *Engine) HealthChecks() []healthz.Check {
	g := e.cur.Load()
	if g == nil {
		return nil
	}
	var out []healthz.Check
	for _, in := range g.instances {
		if hc, ok := in.Value.(HealthChecker); ok {
			out = append(out, hc.HealthChecks()...)
		}
	}
	return out
}

// ServeHTTP implements http.Handler.
func (e *Engine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var g *generation
	for {
		g = e.cur.Load()
		if g == nil {
			http.Error(w, "the request pipeline is not running", http.StatusServiceUnavailable)
			return
		}
		g.inflight.Add(1)
		if !g.retired.Load() {
			break
		}
		// Lost a race with a swap: the next load sees the new generation.
		g.done()
	}
	st := &reqState{e: e, g: g}
	defer st.end()
	g.handler.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), stateKey{}, st)))
}

// Detach implements request.Detacher. A long-running request that has
// reached the stage serving it (a watch) gives its generation back: a
// reload then retires and closes the instances only that generation used,
// a changed admission plugin's informers say, instead of keeping them
// until the watch ends, up to an hour later. The generation's stages stay
// open (held) while the request runs, since the request is still inside
// them; nested instances, which it has passed, may close.
func (st *reqState) Detach() {
	if st.detached.CompareAndSwap(false, true) {
		st.e.hold(st.g, 1)
		st.g.done()
	}
}

// end settles the request's claim: on its generation, or on the stages it
// held after detaching. Whichever of Detach and end comes first decides.
func (st *reqState) end() {
	if st.detached.CompareAndSwap(false, true) {
		st.g.done()
		return
	}
	st.e.hold(st.g, -1)
}

// hold adds d to the holds of g's stages, closing those that a retired
// generation left to the last holder.
func (e *Engine) hold(g *generation, d int) {
	e.mu.Lock()
	var closing []*Instance
	for _, in := range g.stages {
		in.holds += d
		if in.holds == 0 && in.closePending {
			in.closePending = false
			closing = append(closing, in)
		}
	}
	e.mu.Unlock()
	for _, in := range closing {
		e.closeInstance(in)
	}
}

// reqState is the engine's per-request bookkeeping, one allocation per
// request. Its fields are atomics because the timeout stage lets the inner
// stages run on after it has answered.
type reqState struct {
	e        *Engine
	g        *generation
	detached atomic.Bool

	scope  request.Scope
	rec    recorder
	self   [maxStages]atomic.Int64 // ns each stage ran itself
	last   atomic.Int64            // mono() at the last stage boundary
	passed atomic.Uint64           // bit i: stage i called next
	// verbIdx is 1 + the index in metricVerbs, 0 until known.
	verbIdx atomic.Int32
}

type stateKey struct{}

// chain builds a generation's handler: the root, then each stage wrapped in
// its timer, then the non-resource endpoints.
func (e *Engine) chain(g *generation) http.Handler {
	mws := make([]func(http.Handler) http.Handler, len(g.stages))
	for i, s := range g.stages {
		mws[i] = e.timed(i, s)
	}
	inner := chi.Chain(mws...).Handler(e.opts.Next)
	if e.opts.Tracer != nil {
		inner = e.tracedRoot(inner)
	}
	return e.root(inner)
}

// traced gives a stage a child span covering it and the stages after it.
func (e *Engine) traced(name string, h http.Handler) http.Handler {
	spanName := "stage " + name
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, span := e.opts.Tracer.Start(r.Context(), spanName)
		defer span.End()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// tracedRoot opens the request's span, continuing the caller's W3C trace
// context, named as kube-apiserver names it.
func (e *Engine) tracedRoot(next http.Handler) http.Handler {
	prop := propagation.TraceContext{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := e.opts.Tracer.Start(ctx, "KubernetesAPI", trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(
				attribute.String("http.method", r.Method),
				attribute.String("http.target", r.URL.Path),
				attribute.String("http.user_agent", r.UserAgent()),
			))
		defer span.End()
		next.ServeHTTP(w, r.WithContext(ctx))
		st := r.Context().Value(stateKey{}).(*reqState)
		span.SetAttributes(attribute.Int("http.status_code", st.rec.status()))
	})
}

func (e *Engine) root(next http.Handler) http.Handler {
	m := e.metrics
	log := e.opts.Log
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx := r.Context()
		st, ok := ctx.Value(stateKey{}).(*reqState) // ServeHTTP's
		if !ok {
			st = &reqState{}
			ctx = context.WithValue(ctx, stateKey{}, st)
		}
		if st.g != nil {
			st.scope.Detacher = st
		}
		st.last.Store(mono())
		st.rec.ResponseWriter = w
		ctx = request.WithScope(ctx, &st.scope)

		kind := m.inflight.WithLabelValues(requestKind(r))
		kind.Inc()
		defer kind.Dec()

		next.ServeHTTP(&st.rec, r.WithContext(ctx))

		elapsed := time.Since(start)
		info := st.scope.Info
		code := st.rec.status()
		m.observeRequest(r, info, code, st.rec.bytes.Load(), elapsed.Seconds())
		if ce := log.Check(zap.DebugLevel, "request"); ce != nil {
			ce.Write(zap.String("method", r.Method), zap.String("path", r.URL.Path),
				zap.Int("status", code), zap.Duration("latency", elapsed))
		}
	})
}

// timed brackets stage i: its own time is its total minus the time spent
// in the stages after it, and a stage that answers without calling next is
// counted as a rejection with the code it sent.
func (e *Engine) timed(i int, s *Instance) func(http.Handler) http.Handler {
	name := s.Plugin.Name
	terminal := s.Plugin.Terminal
	stage := s.Value.(Stage)
	m := e.metrics
	bit := uint64(1) << uint(i)
	// One observer per verb, looked up once: WithLabelValues hashes its
	// labels, which would otherwise cost more than most stages.
	var observers [len(metricVerbs)]atomic.Pointer[prometheus.Observer]
	observer := func(v int) prometheus.Observer {
		if o := observers[v].Load(); o != nil {
			return *o
		}
		o := m.stageDuration.WithLabelValues(name, metricVerbs[v])
		observers[v].Store(&o)
		return o
	}
	return func(next http.Handler) http.Handler {
		handOn := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			st := r.Context().Value(stateKey{}).(*reqState)
			st.passed.Or(bit)
			st.charge(i)
			next.ServeHTTP(w, r)
		})
		h := stage.Middleware(handOn)
		if e.opts.Tracer != nil {
			h = e.traced(name, h)
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r)
			st := r.Context().Value(stateKey{}).(*reqState)
			self := st.charge(i)
			observer(st.verb(r)).Observe(time.Duration(self).Seconds())
			if !terminal && st.passed.Load()&bit == 0 {
				m.stageRejections.WithLabelValues(name, strconv.Itoa(st.rec.status())).Inc()
			}
		})
	}
}

// monoBase anchors mono: time.Since on a monotonic time reads one clock,
// where time.Now reads two. At two reads per stage per request, it shows.
var monoBase = time.Now()

func mono() int64 { return int64(time.Since(monoBase)) }

// charge gives the time since the last boundary to stage i, the one that
// was running, and returns its total so far. Each stage boundary (handing
// on, returning) reads the clock once; the time between two boundaries
// belongs to exactly one stage, which is what makes stage times their own.
func (st *reqState) charge(i int) int64 {
	now := mono()
	total := st.self[i].Add(now - st.last.Swap(now))
	return total
}

// verb is the request's metric verb as an index into metricVerbs. It is
// worked out once, by the innermost stage to finish, when request-info has
// had its say.
func (st *reqState) verb(r *http.Request) int {
	if v := st.verbIdx.Load(); v != 0 {
		return int(v - 1)
	}
	v := verbIndex(reportedVerb(r, st.scope.Info))
	st.verbIdx.Store(int32(v + 1))
	return v
}

// ProvisionStandalone provisions an instance that lives outside the
// reloadable generations: a post-start hook, which runs once per process.
func (e *Engine) ProvisionStandalone(in *Instance, cfg *config.Config) (*Instance, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var fresh []*Instance
	saved := e.live
	e.live = map[string]*Instance{} // never shared with stages
	defer func() { e.live = saved }()
	return e.provision(in, cfg, &fresh)
}

// Instances lists the active generation's instances, nested ones included.
func (e *Engine) Instances() []*Instance {
	if g := e.cur.Load(); g != nil {
		return g.instances
	}
	return nil
}

// CloseStandalone closes instances from ProvisionStandalone.
func (e *Engine) CloseStandalone(ins []*Instance) {
	walk(ins, func(in *Instance) { e.closeInstance(in) })
}

// RecordReload counts a reload attempt.
func (e *Engine) RecordReload(ok bool) {
	if ok {
		e.metrics.reloads.WithLabelValues("success").Inc()
		e.metrics.lastReload.SetToCurrentTime()
		return
	}
	e.metrics.reloads.WithLabelValues("failure").Inc()
}
