package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestObjectStream(t *testing.T) {
	objs := []string{
		`{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"5"}}}`,
		`{"type":"MODIFIED","object":{"data":{"k":"brace } and { quote \" and \\\\"}}}`,
		`{"a":"\\"}`,
		`{"a":"\\\\\""}`,
		"{ \"nested\" : { \"x\" : [ { } , { \"y\" : \"}\" } ] } }",
		`{"long":"` + strings.Repeat(`x\"\\`, 40000) + `"}`,
		`{}`,
	}
	for _, o := range objs {
		if !json.Valid([]byte(o)) {
			t.Fatalf("test input not JSON: %.80s", o)
		}
	}
	stream := strings.Join(objs, "\n") + "\n \t\r\n"
	readers := map[string]func() io.Reader{
		"whole":    func() io.Reader { return strings.NewReader(stream) },
		"one byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(stream)) },
		"half":     func() io.Reader { return iotest.HalfReader(strings.NewReader(stream)) },
		"no space": func() io.Reader { return strings.NewReader(strings.Join(objs, "")) },
	}
	for name, r := range readers {
		t.Run(name, func(t *testing.T) {
			s := newObjectStream(r())
			s.buf = make([]byte, 7) // small, so objects straddle reads and the buffer grows
			for i, want := range objs {
				got, err := s.next()
				if err != nil {
					t.Fatalf("object %d: %v", i, err)
				}
				if string(got) != want {
					t.Fatalf("object %d = %.80q, want %.80q", i, got, want)
				}
			}
			if _, err := s.next(); err != io.EOF {
				t.Fatalf("after the last object: %v, want EOF", err)
			}
		})
	}
}

func TestObjectStreamErrors(t *testing.T) {
	for in, want := range map[string]error{
		`{"a":"b"`:  io.ErrUnexpectedEOF,
		`{"a":"}"}`: nil,
	} {
		s := newObjectStream(strings.NewReader(in))
		_, err := s.next()
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", in, err, want)
		}
	}
	s := newObjectStream(strings.NewReader(`[1]`))
	if _, err := s.next(); err == nil {
		t.Error("an array: no error")
	}
}

func TestSplitEvent(t *testing.T) {
	for _, in := range []string{
		`{"type":"ADDED","object":{"metadata":{"name":"a"}}}`,
		`{"object":{"metadata":{"name":"a"}},"type":"ADDED"}`,
		"{ \"type\" : \"ADDED\" , \"object\" : {\"metadata\":{\"name\":\"a\"}} }",
	} {
		typ, obj, err := splitEvent([]byte(in))
		if err != nil || typ != "ADDED" || !bytes.Equal(obj, []byte(`{"metadata":{"name":"a"}}`)) {
			t.Errorf("%s: %q %s %v", in, typ, obj, err)
		}
	}
	if _, _, err := splitEvent([]byte(`{"kind":"Status"}`)); err == nil {
		t.Error("no type: no error")
	}
}
