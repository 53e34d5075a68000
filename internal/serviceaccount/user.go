package serviceaccount

import "github.com/kpipe/kpipe/internal/request"

// kube's user.Info extra keys for service account tokens.
const (
	CredentialIDKey = "authentication.kubernetes.io/credential-id"
	PodNameKey      = "authentication.kubernetes.io/pod-name"
	PodUIDKey       = "authentication.kubernetes.io/pod-uid"
	NodeNameKey     = "authentication.kubernetes.io/node-name"
	NodeUIDKey      = "authentication.kubernetes.io/node-uid"
)

// CredentialID is kube's credential id of a token with jti: JTI=<jti>.
func CredentialID(jti string) string { return "JTI=" + jti }

// Username is kube's name of a service account's user.
func Username(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// Groups are kube's groups of a service account's user (the
// authentication stage adds system:authenticated).
func Groups(namespace string) []string {
	return []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace}
}

// UserFor is the user a verified token stands for, as kube's
// ServiceAccountInfo.UserInfo: uid is the service account's, extra names
// the token (by its jti) and the pod and node it is bound to.
func UserFor(c *Claims) *request.User {
	k := c.Kubernetes
	u := &request.User{
		Name:   Username(k.Namespace, k.ServiceAccount.Name),
		UID:    k.ServiceAccount.UID,
		Groups: Groups(k.Namespace),
	}
	extra := map[string][]string{}
	if k.Pod != nil && k.Pod.Name != "" && k.Pod.UID != "" {
		extra[PodNameKey] = []string{k.Pod.Name}
		extra[PodUIDKey] = []string{k.Pod.UID}
	}
	if c.ID != "" {
		extra[CredentialIDKey] = []string{CredentialID(c.ID)}
	}
	if k.Node != nil && k.Node.Name != "" {
		extra[NodeNameKey] = []string{k.Node.Name}
		if k.Node.UID != "" {
			extra[NodeUIDKey] = []string{k.Node.UID}
		}
	}
	if len(extra) > 0 {
		u.Extra = extra
	}
	return u
}
