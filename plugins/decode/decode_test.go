package decode

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/go-chi/chi/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/pipeline/pipelinetest"
	"github.com/kpipe/kpipe/internal/request"
)

// router runs the stage behind a scope, as the engine does, on a real chi
// router; the handler echoes the body it reads and its declared length.
func router(d *Decoder) http.Handler {
	r := chi.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			next.ServeHTTP(w, req.WithContext(request.WithScope(req.Context(), &request.Scope{})))
		})
	})
	r.Use(d.Middleware)
	r.Handle("/*", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusTeapot)
			return
		}
		w.Header().Set("X-Length", jsonInt(req.ContentLength))
		_, _ = w.Write(b)
	}))
	return r
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

// hideLength stops net/http from learning the body's size, so the request
// goes out chunked.
type hideLength struct{ io.Reader }

func TestBodyLimit(t *testing.T) {
	const limit = 10
	cases := []struct {
		name     string
		method   string
		body     []byte
		chunked  bool
		wantCode int
		wantLen  string // X-Length the handler saw, when it is reached
	}{
		{name: "exactly the limit", method: http.MethodPost, body: bytes.Repeat([]byte("a"), limit), wantCode: 200, wantLen: "10"},
		{name: "under the limit", method: http.MethodPut, body: []byte(`{"a":1}`), wantCode: 200, wantLen: "7"},
		{name: "one over the limit", method: http.MethodPost, body: bytes.Repeat([]byte("a"), limit+1), wantCode: 413},
		{name: "far over the limit", method: http.MethodPatch, body: bytes.Repeat([]byte("a"), 1<<20), wantCode: 413},
		{name: "chunked, exactly the limit", method: http.MethodPost, body: bytes.Repeat([]byte("b"), limit), chunked: true, wantCode: 200, wantLen: "10"},
		{name: "chunked, over the limit", method: http.MethodPost, body: bytes.Repeat([]byte("b"), limit+1), chunked: true, wantCode: 413},
		{name: "chunked, far over the limit", method: http.MethodPut, body: bytes.Repeat([]byte("b"), 1<<20), chunked: true, wantCode: 413},
		{name: "delete with a body over the limit", method: http.MethodDelete, body: bytes.Repeat([]byte("c"), limit+1), wantCode: 413},
		{name: "delete with a body", method: http.MethodDelete, body: []byte(`{"x":1}`), wantCode: 200, wantLen: "7"},
		{name: "empty post", method: http.MethodPost, body: nil, wantCode: 200, wantLen: "0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(router(newDecoder(&Config{MaxRequestBodyBytes: limit})))
			defer srv.Close()
			var body io.Reader = bytes.NewReader(tc.body)
			if tc.chunked {
				body = hideLength{body}
			}
			req, err := http.NewRequest(tc.method, srv.URL+"/api/v1/namespaces/a/configmaps", body)
			if err != nil {
				t.Fatal(err)
			}
			if tc.chunked {
				req.ContentLength = -1
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantCode {
				t.Fatalf("code = %d, want %d: %s", resp.StatusCode, tc.wantCode, got)
			}
			if tc.wantCode == 200 {
				if !bytes.Equal(got, tc.body) {
					t.Errorf("handler read %q, want %q", got, tc.body)
				}
				if l := resp.Header.Get("X-Length"); l != tc.wantLen {
					t.Errorf("handler saw ContentLength %s, want %s", l, tc.wantLen)
				}
				return
			}
			checkTooLarge(t, got, "Request entity too large: limit is 10")
		})
	}
}

// TestDefaultLimit checks kube's 3 MiB default and its message, word for
// word.
func TestDefaultLimit(t *testing.T) {
	cases := []struct {
		name     string
		size     int
		wantCode int
	}{
		{name: "3 MiB passes", size: 3145728, wantCode: 200},
		{name: "3 MiB + 1 is refused", size: 3145729, wantCode: 413},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/a/secrets", bytes.NewReader(make([]byte, tc.size)))
			router(newDecoder(defaultConfig())).ServeHTTP(rec, req)
			if rec.Code != tc.wantCode {
				t.Fatalf("code = %d, want %d", rec.Code, tc.wantCode)
			}
			if tc.wantCode == 413 {
				checkTooLarge(t, rec.Body.Bytes(), "Request entity too large: limit is 3145728")
			} else if rec.Body.Len() != tc.size {
				t.Errorf("handler read %d bytes", rec.Body.Len())
			}
		})
	}
}

// TestUntrustedLength feeds requests straight to the stage, where the
// declared length and the body can disagree.
func TestUntrustedLength(t *testing.T) {
	cases := []struct {
		name     string
		method   string
		body     io.Reader
		declared int64
		wantCode int
		wantBody string
	}{
		{name: "body longer than declared", method: http.MethodPost, body: strings.NewReader(strings.Repeat("x", 20)), declared: 5, wantCode: 413},
		{name: "unknown length over the limit", method: http.MethodPost, body: strings.NewReader(strings.Repeat("x", 11)), declared: -1, wantCode: 413},
		{name: "declared over the limit, nothing read", method: http.MethodPost, body: iotest.ErrReader(errors.New("must not be read")), declared: 11, wantCode: 413},
		{name: "read error", method: http.MethodPost, body: iotest.ErrReader(io.ErrUnexpectedEOF), declared: -1, wantCode: 500},
		{name: "outer MaxBytesReader", method: http.MethodPost, body: http.MaxBytesReader(nil, io.NopCloser(strings.NewReader("123456")), 3), declared: -1, wantCode: 413},
		{name: "get body is not read", method: http.MethodGet, body: strings.NewReader(strings.Repeat("x", 50)), declared: 50, wantCode: 200, wantBody: strings.Repeat("x", 50)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "/api/v1/namespaces/a/configmaps", tc.body)
			req.ContentLength = tc.declared
			rec := httptest.NewRecorder()
			router(newDecoder(&Config{MaxRequestBodyBytes: 10})).ServeHTTP(rec, req)
			if rec.Code != tc.wantCode {
				t.Fatalf("code = %d, want %d: %s", rec.Code, tc.wantCode, rec.Body)
			}
			switch tc.wantCode {
			case 413:
				checkTooLarge(t, rec.Body.Bytes(), "Request entity too large: limit is 10")
			case 200:
				if rec.Body.String() != tc.wantBody {
					t.Errorf("body = %q", rec.Body)
				}
			}
		})
	}
}

func checkTooLarge(t *testing.T, body []byte, wantMsg string) {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("body is not a Status: %v: %s", err, body)
	}
	if st.Kind != "Status" || st.Code != 413 || st.Reason != metav1.StatusReasonRequestEntityTooLarge || st.Message != wantMsg {
		t.Errorf("status = %+v, want 413 RequestEntityTooLarge %q", st, wantMsg)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name    string
		cfg     Config
		wantKey string
	}{
		{name: "default", cfg: *defaultConfig()},
		{name: "one byte", cfg: Config{MaxRequestBodyBytes: 1}},
		{name: "zero", cfg: Config{}, wantKey: "maxRequestBodyBytes"},
		{name: "negative", cfg: Config{MaxRequestBodyBytes: -1}, wantKey: "maxRequestBodyBytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pipelinetest.WantFieldError(t, tc.cfg.Validate(), tc.wantKey)
		})
	}
}

func TestConfigThroughBuilder(t *testing.T) {
	cases := []struct {
		name    string
		raw     map[string]any
		want    int64
		wantKey string
	}{
		{name: "default", want: 3145728},
		{name: "set", raw: map[string]any{"maxRequestBodyBytes": 1024}, want: 1024},
		{name: "zero", raw: map[string]any{"maxRequestBodyBytes": 0}, wantKey: "pipeline[0] (decode).config.maxRequestBodyBytes"},
		{name: "negative", raw: map[string]any{"maxRequestBodyBytes": -1}, wantKey: "pipeline[0] (decode).config.maxRequestBodyBytes"},
		{name: "not a number", raw: map[string]any{"maxRequestBodyBytes": "3Mi"}, wantKey: "pipeline[0] (decode).config.maxRequestBodyBytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, err := pipelinetest.Build(t, Register, pipeline.KindStage, Name, tc.raw)
			if tc.wantKey != "" {
				pipelinetest.WantFieldError(t, err, tc.wantKey)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := in.Config.(*Config).MaxRequestBodyBytes; got != tc.want {
				t.Errorf("maxRequestBodyBytes = %d, want %d", got, tc.want)
			}
			if _, ok := in.Value.(pipeline.Stage); !ok {
				t.Errorf("built a %T", in.Value)
			}
		})
	}
}
