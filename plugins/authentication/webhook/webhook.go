package webhook

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"go.uber.org/zap"
	authenticationv1 "k8s.io/api/authentication/v1"
	authenticationv1beta1 "k8s.io/api/authentication/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kpipe/kpipe/internal/auth"
	authwebhook "github.com/kpipe/kpipe/internal/auth/webhook"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/serviceaccount"
)

// Authenticator asks the remote service about bearer tokens.
type Authenticator struct {
	post    func(ctx context.Context, in, out *authenticationv1.TokenReview) (int, error)
	client  *authwebhook.Client
	backoff wait.Backoff
	ttl     time.Duration
	cache   *auth.TokenCache // nil when ttl is 0
	// apiAudiences are the server's (--api-audiences, else the issuer):
	// every review asks for them, as kube-apiserver's requests carry them.
	apiAudiences []string
	log          *zap.Logger
}

var (
	_ auth.Authenticator   = (*Authenticator)(nil)
	_ pipeline.Provisioner = (*Authenticator)(nil)
	_ pipeline.Closer      = (*Authenticator)(nil)
)

// Close implements pipeline.Closer: a retired instance lets its idle
// connections to the service go.
func (a *Authenticator) Close() error {
	a.client.CloseIdleConnections()
	return nil
}

// callTimeout bounds a review shared by concurrent requests with one
// token, retries included: it runs on none of their contexts, so one
// client going away does not fail the others. kube's token cache's shared
// lookup timeout.
const callTimeout = 30 * time.Second

// New loads the kubeconfig file and builds the client; nothing is sent
// until the first token.
func New(c *Config) (*Authenticator, error) {
	rc, err := authwebhook.LoadKubeconfig(c.KubeConfigFile, 0)
	if err != nil {
		return nil, errors.New("kubeConfigFile: " + err.Error())
	}
	a := &Authenticator{backoff: authwebhook.DefaultBackoff(), ttl: c.CacheTTL, log: zap.NewNop()}
	if c.Version == authenticationv1beta1.SchemeGroupVersion.Version {
		client, err := authwebhook.NewClient(rc, authenticationv1beta1.SchemeGroupVersion)
		if err != nil {
			return nil, err
		}
		a.client = client
		a.post = func(ctx context.Context, in, out *authenticationv1.TokenReview) (int, error) {
			req := &authenticationv1beta1.TokenReview{
				TypeMeta: metav1.TypeMeta{APIVersion: authenticationv1beta1.SchemeGroupVersion.String(), Kind: "TokenReview"},
				Spec:     authenticationv1beta1.TokenReviewSpec{Token: in.Spec.Token, Audiences: in.Spec.Audiences},
			}
			res := &authenticationv1beta1.TokenReview{}
			code, err := client.Post(ctx, req, res)
			st := res.Status
			out.Status = authenticationv1.TokenReviewStatus{
				Authenticated: st.Authenticated, Audiences: st.Audiences, Error: st.Error,
				User: authenticationv1.UserInfo{Username: st.User.Username, UID: st.User.UID, Groups: st.User.Groups},
			}
			if st.User.Extra != nil {
				out.Status.User.Extra = make(map[string]authenticationv1.ExtraValue, len(st.User.Extra))
				for k, v := range st.User.Extra {
					out.Status.User.Extra[k] = authenticationv1.ExtraValue(v)
				}
			}
			return code, err
		}
		return a, nil
	}
	client, err := authwebhook.NewClient(rc, authenticationv1.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	a.client = client
	a.post = func(ctx context.Context, in, out *authenticationv1.TokenReview) (int, error) {
		return client.Post(ctx, in, out)
	}
	return a, nil
}

// Provision implements pipeline.Provisioner: the server's API audiences,
// and the cache with kube's token cache metrics.
func (a *Authenticator) Provision(env *pipeline.Env) error {
	if env.Log != nil {
		a.log = env.Log
	}
	switch {
	case env.Shared != nil && env.Shared.ServiceAccounts != nil:
		a.apiAudiences = env.Shared.ServiceAccounts.APIAudiences()
	case env.Server != nil && len(env.Server.ServiceAccount.APIAudiences) > 0:
		a.apiAudiences = slices.Clone(env.Server.ServiceAccount.APIAudiences)
	case env.Server != nil && env.Server.ServiceAccount.Issuer != "":
		a.apiAudiences = []string{env.Server.ServiceAccount.Issuer}
	default:
		a.apiAudiences = []string{serviceaccount.DefaultIssuer}
	}
	if a.ttl > 0 {
		m := auth.NewTokenCacheMetrics()
		if env.Metrics != nil {
			m.Requests = pipeline.Register(env, m.Requests)
			m.Latency = pipeline.Register(env, m.Latency)
			m.Fetches = pipeline.Register(env, m.Fetches)
		}
		// kube keeps the webhook's failures as long as its successes.
		a.cache = auth.NewTokenCacheTTLs(a.ttl, a.ttl, m)
	}
	return nil
}

// AuthenticateRequest implements auth.Authenticator. A request without a
// bearer token is left to the others. A token the service does not
// authenticate is not recognised (ok=false); with the service's
// status.error, or when the call fails, it is an error (401 unless
// another authenticator recognises it).
func (a *Authenticator) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	return auth.AuthenticateBearer(r, a.cache, a.apiAudiences, callTimeout, a.review)
}

// review sends the TokenReview, with retries, and maps its status as
// kube's webhook token authenticator does.
func (a *Authenticator) review(ctx context.Context, token string, want []string) (auth.TokenResult, bool, error) {
	in := &authenticationv1.TokenReview{
		TypeMeta: metav1.TypeMeta{APIVersion: authenticationv1.SchemeGroupVersion.String(), Kind: "TokenReview"},
		Spec:     authenticationv1.TokenReviewSpec{Token: token, Audiences: want},
	}
	var out *authenticationv1.TokenReview
	err := authwebhook.WithBackoff(ctx, a.backoff, func() error {
		out = &authenticationv1.TokenReview{}
		_, err := a.post(ctx, in, out)
		return err
	}, authwebhook.ShouldRetry)
	if err != nil {
		a.log.Error("Failed to make webhook authenticator request", zap.Error(err))
		return auth.TokenResult{}, false, err
	}
	var matched []string
	if len(want) > 0 {
		got := a.apiAudiences
		if len(out.Status.Audiences) > 0 {
			got = out.Status.Audiences
		}
		matched = intersect(want, got)
		if len(matched) == 0 {
			return auth.TokenResult{}, false, nil
		}
	}
	if !out.Status.Authenticated {
		if out.Status.Error != "" {
			return auth.TokenResult{}, false, errors.New(out.Status.Error)
		}
		return auth.TokenResult{}, false, nil
	}
	ui := out.Status.User
	u := &request.User{Name: ui.Username, UID: ui.UID, Groups: ui.Groups}
	if ui.Extra != nil {
		u.Extra = make(map[string][]string, len(ui.Extra))
		for k, v := range ui.Extra {
			u.Extra[k] = v
		}
	}
	return auth.TokenResult{User: u, Matched: matched}, true, nil
}

// intersect is the audiences of want that are in got, in want's order.
func intersect(want, got []string) []string {
	var out []string
	for _, w := range want {
		if slices.Contains(got, w) {
			out = append(out, w)
		}
	}
	return out
}
