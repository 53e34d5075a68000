package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	authnv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/request"
)

// HeaderAuditID carries the request's audit ID both ways, as kube's.
const HeaderAuditID = "Audit-ID"

// statusBodyLimit bounds what is kept of a response below the
// RequestResponse level: only a Status is read from it, and Statuses are
// small.
const statusBodyLimit = 64 << 10

const maxUserAgent = 1024

// Middleware implements pipeline.Stage: kube's WithAuditInit and WithAudit.
func (s *Stage) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received := time.Now()
		id := auditID(w, r)
		p := s.policy.Load()
		if p == nil {
			next.ServeHTTP(w, r)
			return
		}
		ctx := r.Context()
		info, _ := request.InfoFrom(ctx)
		u, _ := request.UserFrom(ctx)
		rec := s.newRecord(p, r, info, u, id, received)
		if rec == nil {
			next.ServeHTTP(w, r)
			return
		}
		sc := request.ScopeFrom(ctx)
		if sc != nil {
			sc.Audit = rec
		}
		rec.scope = sc
		if !rec.process(StageRequestReceived) {
			// kube's WithAudit: a blocking-strict backend failed.
			s.rejected.Inc()
			internalError(w, r, "failed to store audit event")
			return
		}

		longRunning := info != nil && info.IsLongRunning()
		aw := &writer{ResponseWriter: w, rec: rec, started: longRunning}
		if !longRunning {
			aw.keep = statusBodyLimit
			if !rec.ev.Level.Less(LevelRequestResponse) {
				aw.keep = -1
			}
		}
		defer func() {
			if v := recover(); v != nil {
				rec.setStatus(&metav1.Status{Code: http.StatusInternalServerError, Status: metav1.StatusFailure,
					Reason: metav1.StatusReasonInternalError, Message: fmt.Sprintf("APIServer panic'd: %v", v)})
				rec.process(StagePanic)
				panic(v)
			}
			if !aw.wrote() {
				// The handler answered nothing: kube reports a success.
				rec.setStatus(&metav1.Status{Code: http.StatusOK, Status: metav1.StatusSuccess, Message: "Connection closed early"})
				if longRunning {
					rec.process(StageResponseStarted)
				}
			} else {
				rec.response(w.Header().Get("Content-Type"), aw.body.Bytes(), aw.overflow)
			}
			rec.process(StageResponseComplete)
		}()
		next.ServeHTTP(aw, r)
	})
}

// htmlEscaper is kube's sanitizer of plain-text errors.
var htmlEscaper = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;")

// internalError is kube's responsewriters.InternalError: a plain-text 500.
func internalError(w http.ResponseWriter, r *http.Request, msg string) {
	http.Error(w, htmlEscaper.Replace(fmt.Sprintf("Internal Server Error: %q: %v", r.RequestURI, msg)), http.StatusInternalServerError)
}

// auditID is the request's Audit-ID header, or a new UUID; it is sent back
// in the response, as kube's WithAuditInit does.
func auditID(w http.ResponseWriter, r *http.Request) string {
	id := r.Header.Get(HeaderAuditID)
	if id == "" {
		id = uuid.NewString()
	}
	if w.Header().Get(HeaderAuditID) == "" {
		w.Header().Set(HeaderAuditID, id)
	}
	return id
}

// AuditFailure implements auth.FailureAuditor: a request refused by the
// authentication stage is written at ResponseStarted with kube's message
// of the credentials it tried, and no user.
func (s *Stage) AuditFailure(w http.ResponseWriter, r *http.Request) http.ResponseWriter {
	received := time.Now()
	id := auditID(w, r)
	p := s.policy.Load()
	if p == nil {
		return w
	}
	info, _ := request.InfoFrom(r.Context())
	rec := s.newRecord(p, r, info, nil, id, received)
	if rec == nil {
		return w
	}
	rec.setStatus(&metav1.Status{Message: authMethods(r)})
	return &writer{ResponseWriter: w, rec: rec, started: true}
}

var _ auth.FailureAuditor = (*Stage)(nil)

// authMethods is kube's description of the credentials a request carried.
func authMethods(r *http.Request) string {
	var m []string
	if _, _, ok := r.BasicAuth(); ok {
		m = append(m, "basic")
	}
	if f := bytes.Fields([]byte(r.Header.Get("Authorization"))); len(f) > 1 && string(bytes.ToLower(f[0])) == "bearer" {
		m = append(m, "bearer")
	}
	if r.URL.Query().Get("access_token") != "" {
		m = append(m, "access_token")
	}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		m = append(m, "x509")
	}
	if len(m) == 0 {
		return "Authentication failed, no credentials provided"
	}
	return "Authentication failed, attempted: " + joinComma(m)
}

func joinComma(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(x)
	}
	return b.String()
}

// record is one request's event, shared by the stages after audit (on the
// scope) and the response writer, which may run on another goroutine.
type record struct {
	s     *Stage
	scope *request.Scope
	d     decision
	mu    sync.Mutex
	ev    Event
}

var _ request.AuditRecorder = (*record)(nil)

// newRecord evaluates the policy; nil when the level is None.
func (s *Stage) newRecord(p *Policy, r *http.Request, info *request.RequestInfo, u *request.User, id string, received time.Time) *record {
	a := &auth.Attributes{User: u, Verb: lowerMethod(r.Method), Path: r.URL.Path}
	if info != nil {
		a.Verb, a.Path, a.ResourceRequest = info.Verb, info.Path, info.IsResourceRequest
		if info.IsResourceRequest {
			a.Namespace, a.APIGroup, a.APIVersion = info.Namespace, info.APIGroup, info.APIVersion
			a.Resource, a.Subresource, a.Name = info.Resource, info.Subresource, info.Name
		}
	}
	d := p.Evaluate(a)
	s.levels.WithLabelValues(string(d.level)).Inc()
	if d.level == LevelNone {
		return nil
	}
	ev := Event{
		TypeMeta:                 metav1.TypeMeta{Kind: "Event", APIVersion: GroupVersion},
		Level:                    d.level,
		AuditID:                  types.UID(id),
		RequestURI:               r.URL.RequestURI(),
		Verb:                     a.Verb,
		UserAgent:                r.UserAgent(),
		RequestReceivedTimestamp: metav1.NewMicroTime(received),
	}
	if len(ev.UserAgent) > maxUserAgent {
		ev.UserAgent = ev.UserAgent[:maxUserAgent] + "...TRUNCATED"
	}
	for _, ip := range utilnet.SourceIPs(r) {
		ev.SourceIPs = append(ev.SourceIPs, ip.String())
	}
	if u != nil {
		ev.User = userInfo(u)
	}
	if a.ResourceRequest {
		ev.ObjectRef = &ObjectReference{Namespace: a.Namespace, Name: a.Name, Resource: a.Resource,
			Subresource: a.Subresource, APIGroup: a.APIGroup, APIVersion: a.APIVersion}
	}
	return &record{s: s, d: d, ev: ev}
}

func userInfo(u *request.User) authnv1.UserInfo {
	ui := authnv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups, Extra: map[string]authnv1.ExtraValue{}}
	for k, v := range u.Extra {
		ui.Extra[k] = v
	}
	return ui
}

// AddAnnotation implements request.AuditRecorder.
func (rec *record) AddAnnotation(key, value string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.ev.Annotations == nil {
		rec.ev.Annotations = map[string]string{}
	}
	if _, ok := rec.ev.Annotations[key]; !ok {
		rec.ev.Annotations[key] = value
	}
}

// RecordOperation implements request.AuditRecorder: the decoded write
// completes objectRef and, from the Request level on, is the
// requestObject (the patch as sent, for a patch), as kube's
// LogRequestObject and LogRequestPatch.
func (rec *record) RecordOperation(op *request.Operation) {
	var obj runtime.Object
	var raw json.RawMessage
	switch {
	case op.PatchBytes != nil:
		if !rec.ev.Level.Less(LevelRequest) {
			raw = toJSON(op.PatchBytes)
		}
	case op.Object != nil:
		obj = op.Object
		if !rec.ev.Level.Less(LevelRequest) {
			raw = encode(obj, op.Resource, rec.d.omitManagedFields)
		}
	case op.DeleteOptions != nil:
		if !rec.ev.Level.Less(LevelRequest) {
			raw = encodeDeleteOptions(op.DeleteOptions)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if ref := rec.ev.ObjectRef; ref != nil && obj != nil {
		if m, err := meta.Accessor(obj); err == nil {
			if ref.Namespace == "" {
				ref.Namespace = m.GetNamespace()
			}
			if ref.Name == "" {
				ref.Name = m.GetName()
			}
			if ref.UID == "" {
				ref.UID = m.GetUID()
			}
			if ref.ResourceVersion == "" {
				ref.ResourceVersion = m.GetResourceVersion()
			}
		}
	}
	if raw != nil {
		rec.ev.RequestObject = raw
	}
}

func (rec *record) setStatus(st *metav1.Status) {
	rec.mu.Lock()
	rec.ev.ResponseStatus = st
	rec.mu.Unlock()
}

func (rec *record) setCode(code int) {
	rec.mu.Lock()
	if rec.ev.ResponseStatus == nil {
		rec.ev.ResponseStatus = &metav1.Status{}
	}
	rec.ev.ResponseStatus.Code = int32(code)
	rec.mu.Unlock()
}

// process writes the event at stage, unless the policy omits it. It
// reports false when a blocking-strict backend could not take it.
func (rec *record) process(stage EventStage) bool {
	if slices.Contains(rec.d.omitStages, stage) {
		return true
	}
	rec.mu.Lock()
	rec.ev.Stage = stage
	if stage == StageRequestReceived {
		rec.ev.StageTimestamp = rec.ev.RequestReceivedTimestamp
	} else {
		rec.ev.StageTimestamp = metav1.NewMicroTime(time.Now())
		// The impersonation stage ran by now: kube records who was
		// impersonated beside who asked.
		if sc := rec.scope; sc != nil && sc.Impersonator != nil && sc.User != nil && rec.ev.ImpersonatedUser == nil {
			ui := userInfo(sc.User)
			rec.ev.ImpersonatedUser = &ui
		}
	}
	line, err := json.Marshal(&rec.ev)
	var hookLine []byte
	if err == nil {
		hookLine = rec.s.webhookLine(&rec.ev, line)
	}
	rec.mu.Unlock()
	return rec.s.emit(line, hookLine, err)
}

// writer notes the response code (and, for a long-running request, writes
// the ResponseStarted event then) and keeps the body for responseStatus
// and responseObject.
type writer struct {
	http.ResponseWriter
	rec     *record
	started bool // write ResponseStarted at the first byte
	once    sync.Once
	keep    int // bytes of body to keep; -1 all
	body    bytes.Buffer
	// overflow is set when the body outgrew keep.
	overflow bool
	did      bool
}

func (w *writer) processCode(code int) {
	w.once.Do(func() {
		w.did = true
		w.rec.setCode(code)
		if w.started {
			w.rec.process(StageResponseStarted)
		}
	})
}

func (w *writer) wrote() bool {
	var did bool
	w.once.Do(func() {}) // settles a concurrent first write
	did = w.did
	return did
}

func (w *writer) WriteHeader(code int) {
	if code >= 200 || code == http.StatusSwitchingProtocols {
		w.processCode(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *writer) Write(b []byte) (int, error) {
	w.processCode(http.StatusOK)
	if w.keep != 0 && !w.overflow {
		if w.keep > 0 && w.body.Len()+len(b) > w.keep {
			w.overflow = true
			w.body.Reset()
		} else {
			w.body.Write(b)
		}
	}
	return w.ResponseWriter.Write(b)
}

func (w *writer) Flush() {
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *writer) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.processCode(http.StatusSwitchingProtocols)
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w *writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func lowerMethod(m string) string {
	b := []byte(m)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
