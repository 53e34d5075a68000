// Package plugins is the one listing of every plugin kpipe ships.
// Registration order means nothing: apiserver.yaml's lists decide the
// order of execution.
package plugins

import (
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/plugins/admission/alwayspullimages"
	"github.com/kpipe/kpipe/plugins/admission/defaultingressclass"
	"github.com/kpipe/kpipe/plugins/admission/defaulttolerationseconds"
	"github.com/kpipe/kpipe/plugins/admission/limitranger"
	"github.com/kpipe/kpipe/plugins/admission/mutating"
	"github.com/kpipe/kpipe/plugins/admission/mutatingwebhook"
	"github.com/kpipe/kpipe/plugins/admission/namespaceautoprovision"
	"github.com/kpipe/kpipe/plugins/admission/namespaceexists"
	"github.com/kpipe/kpipe/plugins/admission/namespacelifecycle"
	"github.com/kpipe/kpipe/plugins/admission/podsecurity"
	"github.com/kpipe/kpipe/plugins/admission/priority"
	"github.com/kpipe/kpipe/plugins/admission/resourcequota"
	saadmission "github.com/kpipe/kpipe/plugins/admission/serviceaccount"
	"github.com/kpipe/kpipe/plugins/admission/validating"
	"github.com/kpipe/kpipe/plugins/admission/validatingadmissionpolicy"
	"github.com/kpipe/kpipe/plugins/admission/validatingwebhook"
	"github.com/kpipe/kpipe/plugins/audit"
	"github.com/kpipe/kpipe/plugins/authentication"
	"github.com/kpipe/kpipe/plugins/authentication/anonymous"
	jwtauthn "github.com/kpipe/kpipe/plugins/authentication/jwt"
	satoken "github.com/kpipe/kpipe/plugins/authentication/serviceaccount"
	"github.com/kpipe/kpipe/plugins/authentication/tokenfile"
	authnwebhook "github.com/kpipe/kpipe/plugins/authentication/webhook"
	"github.com/kpipe/kpipe/plugins/authentication/x509"
	"github.com/kpipe/kpipe/plugins/authorization"
	"github.com/kpipe/kpipe/plugins/authorization/alwaysallow"
	"github.com/kpipe/kpipe/plugins/authorization/alwaysdeny"
	"github.com/kpipe/kpipe/plugins/authorization/rbac"
	authzwebhook "github.com/kpipe/kpipe/plugins/authorization/webhook"
	"github.com/kpipe/kpipe/plugins/decode"
	"github.com/kpipe/kpipe/plugins/etcdwriter"
	"github.com/kpipe/kpipe/plugins/fieldmanager"
	"github.com/kpipe/kpipe/plugins/impersonation"
	"github.com/kpipe/kpipe/plugins/maxinflight"
	"github.com/kpipe/kpipe/plugins/panicrecovery"
	"github.com/kpipe/kpipe/plugins/poststarthook/bootstrap"
	"github.com/kpipe/kpipe/plugins/poststarthook/identitylease"
	"github.com/kpipe/kpipe/plugins/poststarthook/namespacecontroller"
	"github.com/kpipe/kpipe/plugins/poststarthook/priorityclasses"
	"github.com/kpipe/kpipe/plugins/poststarthook/resourcequotacontroller"
	"github.com/kpipe/kpipe/plugins/poststarthook/serviceaccountcontroller"
	"github.com/kpipe/kpipe/plugins/requestinfo"
	"github.com/kpipe/kpipe/plugins/timeout"
	"github.com/kpipe/kpipe/plugins/validate"
)

// Registry returns a registry holding every plugin.
func Registry() *pipeline.Registry {
	r := pipeline.NewRegistry()
	for _, register := range []func(*pipeline.Registry){
		panicrecovery.Register,
		requestinfo.Register,
		maxinflight.Register,
		timeout.Register,
		authentication.Register,
		x509.Register,
		tokenfile.Register,
		anonymous.Register,
		satoken.Register,
		jwtauthn.Register,
		authnwebhook.Register,
		audit.Register,
		impersonation.Register,
		authorization.Register,
		alwaysallow.Register,
		alwaysdeny.Register,
		rbac.Register,
		authzwebhook.Register,
		decode.Register,
		fieldmanager.Register,
		mutating.Register,
		validate.Register,
		validating.Register,
		etcdwriter.Register,
		namespacelifecycle.Register,
		bootstrap.Register,
		namespacecontroller.Register,
		identitylease.Register,
		limitranger.Register,
		alwayspullimages.Register,
		defaulttolerationseconds.Register,
		defaultingressclass.Register,
		namespaceautoprovision.Register,
		namespaceexists.Register,
		priority.Register,
		resourcequota.Register,
		saadmission.Register,
		priorityclasses.Register,
		resourcequotacontroller.Register,
		serviceaccountcontroller.Register,
		podsecurity.Register,
		mutatingwebhook.Register,
		validatingadmissionpolicy.Register,
		validatingwebhook.Register,
	} {
		register(r)
	}
	return r
}
