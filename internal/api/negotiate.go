package api

import (
	"net/http"
	"strings"

	"github.com/munnerz/goautoneg"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Output is the negotiated response form.
type Output struct {
	// MediaType is what goes in Content-Type.
	MediaType string
	Info      runtime.SerializerInfo
	// Table is set when the client asked for meta.k8s.io/v1 Table
	// (`as=Table;v=v1;g=meta.k8s.io`), as kubectl get does.
	Table bool
}

// mediaTypes are what kpipe answers in, in order of preference.
var mediaTypes = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}

// NegotiateOutput picks the response form from the Accept header, as
// kube's negotiation does: the first acceptable range in quality order;
// a Table request kpipe can serve wins; none acceptable is 406.
func NegotiateOutput(r *http.Request, allowTable bool) (Output, error) {
	header := r.Header.Get("Accept")
	if header == "" {
		header = "application/json"
	}
	for _, a := range goautoneg.ParseAccept(header) {
		as := a.Params["as"]
		if as != "" {
			// Only Table is served among the alternative representations.
			if as != "Table" || !allowTable || a.Params["g"] != "meta.k8s.io" || a.Params["v"] != "v1" {
				continue
			}
		}
		mt := a.Type + "/" + a.SubType
		for _, want := range mediaTypes {
			if matches(mt, want) {
				info, ok := runtime.SerializerInfoForMediaType(Codecs.SupportedMediaTypes(), want)
				if !ok {
					continue
				}
				return Output{MediaType: want, Info: info, Table: as == "Table"}, nil
			}
		}
	}
	return Output{}, &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable,
		Message: "only the following media types are accepted: " + strings.Join(mediaTypes, ", "),
	}}
}

// Encode writes obj in the negotiated form, with apiVersion and kind set
// for gv.
func (o Output) Encode(w http.ResponseWriter, code int, obj runtime.Object, gv schema.GroupVersion) error {
	enc := Codecs.EncoderForVersion(o.Info.Serializer, gv)
	w.Header().Set("Content-Type", o.MediaType)
	w.WriteHeader(code)
	return enc.Encode(obj, w)
}

func matches(got, want string) bool {
	if got == "*/*" {
		return true
	}
	if strings.HasSuffix(got, "/*") {
		return strings.HasPrefix(want, strings.TrimSuffix(got, "*"))
	}
	return got == want
}
