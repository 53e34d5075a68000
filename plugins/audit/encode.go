package audit

import (
	"bytes"
	"encoding/json"
	"mime"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/internal/api"
)

// encode is obj as JSON in its resource's version, without managed fields
// when the policy says so.
func encode(obj runtime.Object, res *api.Resource, omitManagedFields bool) json.RawMessage {
	if omitManagedFields {
		if m, err := meta.Accessor(obj); err == nil && len(m.GetManagedFields()) > 0 {
			obj = obj.DeepCopyObject()
			if m, err := meta.Accessor(obj); err == nil {
				m.SetManagedFields(nil)
			}
		}
	}
	var buf bytes.Buffer
	gv := obj.GetObjectKind().GroupVersionKind().GroupVersion()
	if res != nil {
		gv = res.GroupVersion
	}
	if err := api.Codecs.LegacyCodec(gv).Encode(obj, &buf); err != nil {
		return nil
	}
	return json.RawMessage(bytes.TrimSpace(buf.Bytes()))
}

func encodeDeleteOptions(o *metav1.DeleteOptions) json.RawMessage {
	c := *o
	c.TypeMeta = metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "meta.k8s.io/v1"}
	b, err := json.Marshal(&c)
	if err != nil {
		return nil
	}
	return b
}

// toJSON is JSON or YAML data as JSON (an apply patch is YAML).
func toJSON(data []byte) json.RawMessage {
	if json.Valid(data) {
		return json.RawMessage(data)
	}
	if b, err := yaml.YAMLToJSON(data); err == nil {
		return b
	}
	return nil
}

// response reads what the response was: a Status becomes responseStatus
// (kube's LogResponseObject), and from the RequestResponse level on the
// object is the responseObject, as JSON whatever the encoding sent.
func (rec *record) response(contentType string, body []byte, overflow bool) {
	if len(body) == 0 || overflow {
		return
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	var raw json.RawMessage
	switch mt {
	case "application/json":
		raw = json.RawMessage(bytes.TrimSpace(body))
	case "application/yaml":
		if b, err := yaml.YAMLToJSON(body); err == nil {
			raw = b
		}
	case "application/vnd.kubernetes.protobuf":
		obj, _, err := api.Codecs.UniversalDeserializer().Decode(body, nil, nil)
		if err != nil {
			return
		}
		if b, err := json.Marshal(obj); err == nil {
			raw = b
		}
	default:
		return // not an API object
	}
	if !json.Valid(raw) {
		return
	}
	var head struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
	}
	_ = json.Unmarshal(raw, &head)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if head.Kind == "Status" && head.APIVersion == "v1" {
		var st metav1.Status
		if json.Unmarshal(raw, &st) == nil {
			code := st.Code
			if rec.ev.ResponseStatus != nil && code == 0 {
				code = rec.ev.ResponseStatus.Code
			}
			rec.ev.ResponseStatus = &metav1.Status{Status: st.Status, Message: st.Message, Reason: st.Reason, Details: st.Details, Code: code}
		}
	}
	if rec.ev.Level.Less(LevelRequestResponse) {
		return
	}
	if rec.d.omitManagedFields {
		raw = dropManagedFields(raw)
	}
	rec.ev.ResponseObject = raw
}

// dropManagedFields removes metadata.managedFields from an object, the
// items of a list and the rows of a Table.
func dropManagedFields(raw json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	strip := func(o any) {
		if om, ok := o.(map[string]any); ok {
			if md, ok := om["metadata"].(map[string]any); ok {
				delete(md, "managedFields")
			}
		}
	}
	strip(m)
	if items, ok := m["items"].([]any); ok {
		for _, it := range items {
			strip(it)
		}
	}
	if rows, ok := m["rows"].([]any); ok {
		for _, r := range rows {
			if rm, ok := r.(map[string]any); ok {
				strip(rm["object"])
			}
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return b
}
