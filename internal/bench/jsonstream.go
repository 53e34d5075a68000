package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// objectStream splits a stream of JSON objects, such as a watch's, into
// the objects' bytes without decoding them: it only follows strings and
// braces. encoding/json's Decoder runs its full scanner over every byte,
// and a watcher that decodes 200 copies of every event takes the CPU the
// server under test needs. The stream must be valid JSON; anything
// between objects but whitespace is an error.
type objectStream struct {
	r   io.Reader
	buf []byte
	// buf[start:end] is unread; buf[start:pos] of it already scanned,
	// with depth braces open and inString its state.
	start, pos, end int
	depth           int
	inString        bool
	err             error
}

func newObjectStream(r io.Reader) *objectStream {
	return &objectStream{r: r, buf: make([]byte, 64<<10)}
}

// next returns the next object, valid until the following call.
func (s *objectStream) next() ([]byte, error) {
	for {
		if obj, ok, err := s.scan(); err != nil || ok {
			return obj, err
		}
		if s.err != nil {
			if s.err == io.EOF && s.start < s.end {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, s.err
		}
		s.fill()
	}
}

// fill reads more, first moving the unread part to the front or
// growing the buffer for an object larger than it.
func (s *objectStream) fill() {
	if s.start > 0 {
		n := copy(s.buf, s.buf[s.start:s.end])
		s.pos -= s.start
		s.start, s.end = 0, n
	}
	if s.end == len(s.buf) {
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
	n, err := s.r.Read(s.buf[s.end:])
	s.end += n
	if err != nil {
		s.err = err
	}
}

// scan goes on from pos; it returns an object once its closing brace
// is in the buffer.
func (s *objectStream) scan() ([]byte, bool, error) {
	b := s.buf[:s.end]
	if s.depth == 0 {
		// Before an object: skip whitespace.
		for s.pos < len(b) && isSpace(b[s.pos]) {
			s.pos++
		}
		s.start = s.pos
		if s.pos == len(b) {
			return nil, false, nil
		}
		if b[s.pos] != '{' {
			return nil, false, fmt.Errorf("watch stream: %q where an object should start", b[s.pos])
		}
		s.pos++
		s.depth = 1
	}
	for s.pos < len(b) {
		if s.inString {
			// Jump to the next quote; it ends the string unless an odd
			// number of backslashes precedes it. pos is never escaped: it
			// follows a quote, or starts a run of backslashes.
			i := bytes.IndexByte(b[s.pos:], '"')
			if i < 0 {
				// Keep a trailing run of backslashes for the next scan,
				// which sees what they escape.
				s.pos = len(b) - backslashes(b[s.pos:])
				break
			}
			q := s.pos + i
			s.pos = q + 1
			if backslashes(b[q-i:q])%2 == 0 {
				s.inString = false
			}
			continue
		}
		switch b[s.pos] {
		case '"':
			s.inString = true
		case '{':
			s.depth++
		case '}':
			s.depth--
			if s.depth == 0 {
				s.pos++
				obj := b[s.start:s.pos]
				s.start = s.pos
				return obj, true, nil
			}
		}
		s.pos++
	}
	return nil, false, nil
}

// backslashes counts the backslashes that end b.
func backslashes(b []byte) int {
	n := 0
	for n < len(b) && b[len(b)-1-n] == '\\' {
		n++
	}
	return n
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

var (
	eventTypeKey   = []byte(`{"type":"`)
	eventObjectKey = []byte(`","object":`)
	errNotEvent    = errors.New("not a watch event")
)

// splitEvent returns a WatchEvent's type and object. kube writes the type
// first; an event in any other layout is decoded.
func splitEvent(ev []byte) (typ string, obj []byte, err error) {
	if rest, ok := bytes.CutPrefix(ev, eventTypeKey); ok {
		if i := bytes.IndexByte(rest, '"'); i > 0 {
			if o, ok := bytes.CutPrefix(rest[i:], eventObjectKey); ok && len(o) > 0 && o[len(o)-1] == '}' {
				return string(rest[:i]), bytes.TrimSpace(o[:len(o)-1]), nil
			}
		}
	}
	var e struct {
		Type   string          `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	if err := json.Unmarshal(ev, &e); err != nil {
		return "", nil, err
	}
	if e.Type == "" {
		return "", nil, errNotEvent
	}
	return e.Type, e.Object, nil
}
