package server

import (
	"context"
	"crypto"
	"fmt"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/rbacguard"
	"github.com/kpipe/kpipe/internal/reviews"
	"github.com/kpipe/kpipe/internal/serviceaccount"
)

// access is what the server wires between the resources and the
// authentication and authorization stages: the stages' current decisions,
// the service account token issuer, and the handlers built on them.
type access struct {
	authorizer    *auth.Holder
	authenticator *auth.AuthenticatorHolder
	tokens        *serviceaccount.Tokens
}

// setupServiceAccounts loads the service account signing key (or
// generates stateDir/pki/sa.key) and the extra public keys, as
// kube-apiserver's --service-account-* flags.
func (s *Server) setupServiceAccounts() error {
	c := s.cfg.ServiceAccount
	var signer crypto.Signer
	var err error
	if c.SigningKeyFile != "" {
		if signer, err = serviceaccount.LoadSigningKey(c.SigningKeyFile); err != nil {
			return fmt.Errorf("serviceAccount.signingKeyFile: %w", err)
		}
	} else {
		var generated bool
		if signer, generated, err = serviceaccount.LoadOrCreateKey(s.pki.dir); err != nil {
			return fmt.Errorf("service account key: %w", err)
		}
		if generated {
			s.log.Info("generated service account key", zap.String("dir", s.pki.dir))
		}
	}
	var pubs []crypto.PublicKey
	for _, f := range c.KeyFiles {
		keys, err := serviceaccount.LoadPublicKeys(f)
		if err != nil {
			return fmt.Errorf("serviceAccount.keyFiles: %w", err)
		}
		pubs = append(pubs, keys...)
	}
	t, err := serviceaccount.New(serviceaccount.Options{
		Issuer: c.Issuer, APIAudiences: c.APIAudiences, Signer: signer, PublicKeys: pubs,
		MaxExpiration: c.MaxTokenExpiration,
	})
	if err != nil {
		return err
	}
	s.access = &access{authorizer: &auth.Holder{}, authenticator: &auth.AuthenticatorHolder{}, tokens: t}
	return nil
}

// resourceOptions are the api.Options with the virtual resources' handlers
// and the RBAC escalation check.
func (s *Server) resourceOptions() api.Options {
	a := s.access
	rv := &reviews.Reviews{Authorizer: a.authorizer, Authenticator: a.authenticator, APIAudiences: a.tokens.APIAudiences()}
	guard := &rbacguard.Guard{Authorizer: a.authorizer}
	return api.Options{
		EventTTL: s.cfg.Storage.EventTTL,
		Reviews:  rv.Handlers(),
		// TokenRequest reads service accounts from the registry it is part
		// of, which exists once the options have built it.
		TokenRequest: func(ctx context.Context, namespace, name string, obj runtime.Object) (runtime.Object, error) {
			objs := serviceaccount.Objects{Resources: s.resources, Prefix: s.cfg.Storage.Prefix}
			return a.tokens.TokenRequest(objs)(ctx, namespace, name, obj)
		},
		RBACWriteCheck: guard.Check,
	}
}
