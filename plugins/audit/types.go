package audit

import (
	"encoding/json"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The audit.k8s.io/v1 types kpipe reads and writes, field for field as
// kube's (k8s.io/apiserver is not a dependency of kpipe).

// Level is how much of a request is recorded.
type Level string

// kube's levels, in rising order.
const (
	LevelNone            Level = "None"
	LevelMetadata        Level = "Metadata"
	LevelRequest         Level = "Request"
	LevelRequestResponse Level = "RequestResponse"
)

func (l Level) rank() int {
	switch l {
	case LevelMetadata:
		return 1
	case LevelRequest:
		return 2
	case LevelRequestResponse:
		return 3
	}
	return 0
}

// Less reports whether l records less than o.
func (l Level) Less(o Level) bool { return l.rank() < o.rank() }

// EventStage is the point of the request an event is written at (kube's Stage).
type EventStage string

// kube's stages.
const (
	StageRequestReceived  EventStage = "RequestReceived"
	StageResponseStarted  EventStage = "ResponseStarted"
	StageResponseComplete EventStage = "ResponseComplete"
	StagePanic            EventStage = "Panic"
)

// GroupVersion is audit.k8s.io/v1.
const GroupVersion = "audit.k8s.io/v1"

// Event is one audit.k8s.io/v1 Event.
type Event struct {
	metav1.TypeMeta          `json:",inline"`
	Level                    Level             `json:"level"`
	AuditID                  types.UID         `json:"auditID"`
	Stage                    EventStage        `json:"stage"`
	RequestURI               string            `json:"requestURI"`
	Verb                     string            `json:"verb"`
	User                     authnv1.UserInfo  `json:"user"`
	ImpersonatedUser         *authnv1.UserInfo `json:"impersonatedUser,omitempty"`
	SourceIPs                []string          `json:"sourceIPs,omitempty"`
	UserAgent                string            `json:"userAgent,omitempty"`
	ObjectRef                *ObjectReference  `json:"objectRef,omitempty"`
	ResponseStatus           *metav1.Status    `json:"responseStatus,omitempty"`
	RequestObject            json.RawMessage   `json:"requestObject,omitempty"`
	ResponseObject           json.RawMessage   `json:"responseObject,omitempty"`
	RequestReceivedTimestamp metav1.MicroTime  `json:"requestReceivedTimestamp"`
	StageTimestamp           metav1.MicroTime  `json:"stageTimestamp"`
	Annotations              map[string]string `json:"annotations,omitempty"`
}

// EventList is an audit.k8s.io/v1 EventList: what the webhook backend
// POSTs. Its items carry no kind and apiVersion, as kube's.
type EventList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Event `json:"items"`
}

// ObjectReference names the object of a resource request.
type ObjectReference struct {
	Resource        string    `json:"resource,omitempty"`
	Namespace       string    `json:"namespace,omitempty"`
	Name            string    `json:"name,omitempty"`
	UID             types.UID `json:"uid,omitempty"`
	APIGroup        string    `json:"apiGroup,omitempty"`
	APIVersion      string    `json:"apiVersion,omitempty"`
	ResourceVersion string    `json:"resourceVersion,omitempty"`
	Subresource     string    `json:"subresource,omitempty"`
}

// Policy is an audit.k8s.io/v1 Policy: the first rule that matches a
// request decides its level.
type Policy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Rules             []PolicyRule `json:"rules"`
	OmitStages        []EventStage `json:"omitStages,omitempty"`
	OmitManagedFields bool         `json:"omitManagedFields,omitempty"`
}

// PolicyRule matches requests; every listed criterion must hold.
type PolicyRule struct {
	Level             Level            `json:"level"`
	Users             []string         `json:"users,omitempty"`
	UserGroups        []string         `json:"userGroups,omitempty"`
	Verbs             []string         `json:"verbs,omitempty"`
	Resources         []GroupResources `json:"resources,omitempty"`
	Namespaces        []string         `json:"namespaces,omitempty"`
	NonResourceURLs   []string         `json:"nonResourceURLs,omitempty"`
	OmitStages        []EventStage     `json:"omitStages,omitempty"`
	OmitManagedFields *bool            `json:"omitManagedFields,omitempty"`
}

// GroupResources selects resources of one API group.
type GroupResources struct {
	Group         string   `json:"group,omitempty"`
	Resources     []string `json:"resources,omitempty"`
	ResourceNames []string `json:"resourceNames,omitempty"`
}
