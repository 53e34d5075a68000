// Package cel is the CEL environment of ValidatingAdmissionPolicies and
// of match conditions (webhooks' and policies'), with kube's variables,
// libraries and cost limits: `object`, `oldObject`, `request`, `params`,
// `namespaceObject`, `authorizer` and the composited, lazily evaluated
// `variables`, in kube's NewExpressions and StoredExpressions
// environments. It compiles expressions once (callers cache the result
// per configuration generation) and evaluates them per request; API
// validation compiles with the same functions, so the two cannot
// disagree.
package cel

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
)

// Kube's limits (k8s.io/apiserver/pkg/apis/cel).
const (
	// PerCallLimit is the runtime cost limit of one expression.
	PerCallLimit = 1000000
	// RuntimeCostBudget is the cost all of a policy binding's expressions
	// may spend on one request.
	RuntimeCostBudget = 10000000
	// CheckFrequency is how many comprehension iterations pass between
	// checks for interruption.
	CheckFrequency = 100
	// MaxMessageSize bounds an evaluated messageExpression.
	MaxMessageSize = 5 * 1024
)

// Variable names, kube's.
const (
	ObjectVar    = "object"
	OldObjectVar = "oldObject"
	ParamsVar    = "params"
	RequestVar   = "request"
	NamespaceVar = "namespaceObject"
	VariablesVar = "variables"
)

// EnvType is kube's choice of environment (environment.Type): an
// expression being written compiles in NewExpressions, one already
// stored (at admission, or unchanged on update) in StoredExpressions,
// which also holds what kube added in its current release, so that a
// rollback to the previous release can still read what was written.
type EnvType int

const (
	// NewExpressions compiles expressions being written: the libraries
	// of kube's compatibility version (1.36 for kube 1.37).
	NewExpressions EnvType = iota
	// StoredExpressions compiles stored expressions: every library,
	// including the lists library's `includes` (kube 1.37).
	StoredExpressions
)

var (
	baseOnce [2]sync.Once
	baseEnv  [2]*cel.Env
	baseErr  [2]error
)

// base is kube's base environment (environment.MustBaseEnvSet at 1.37)
// without kube's own libraries other than those in library.go: CEL's
// standard library with optional types and cross-type numeric
// comparisons, the ext strings (v2), sets, lists and two-variable
// comprehensions, kube's regex find/findAll and lists, and its AST
// validators; t chooses the lists library's version.
func base(t EnvType) (*cel.Env, error) {
	if t != StoredExpressions {
		t = NewExpressions
	}
	baseOnce[t].Do(func() {
		baseEnv[t], baseErr[t] = cel.NewEnv(
			cel.HomogeneousAggregateLiterals(),
			cel.EagerlyValidateDeclarations(true),
			cel.DefaultUTCTimeZone(true),
			cel.CostEstimatorOptions(checker.PresenceTestHasCost(false)),
			cel.CrossTypeNumericComparisons(true),
			cel.OptionalTypes(),
			cel.ASTValidators(
				cel.ValidateDurationLiterals(),
				cel.ValidateTimestampLiterals(),
				cel.ValidateRegexLiterals(),
				cel.ValidateHomogeneousAggregateLiterals(),
			),
			ext.Strings(ext.StringsVersion(2)),
			ext.Sets(),
			ext.TwoVarComprehensions(),
			ext.Lists(ext.ListsVersion(3)),
			regexLib(),
			listsLib(t == StoredExpressions),
		)
	})
	return baseEnv[t], baseErr[t]
}

// programOptions are kube's: cost tracking with the per-call limit.
func programOptions() []cel.ProgramOption {
	return []cel.ProgramOption{
		cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost),
		cel.CostLimit(PerCallLimit),
		cel.CostTrackerOptions(interpreter.PresenceTestHasCost(false)),
		cel.InterruptCheckFrequency(CheckFrequency),
	}
}

// ErrorType is kube's classification of CEL errors, which decides the
// field error a compile failure becomes.
type ErrorType int

const (
	// ErrorInvalid is a compile error in the expression.
	ErrorInvalid ErrorType = iota
	// ErrorInternal is anything else.
	ErrorInternal
)

// Error is a compile error, with kube's detail text.
type Error struct {
	Type   ErrorType
	Detail string
}

func (e *Error) Error() string { return e.Detail }

func invalid(format string, args ...any) *Error {
	return &Error{Type: ErrorInvalid, Detail: fmt.Sprintf(format, args...)}
}

func internal(format string, args ...any) *Error {
	return &Error{Type: ErrorInternal, Detail: fmt.Sprintf(format, args...)}
}
