package cel

import "github.com/google/cel-go/cel"

// BaseEnv is kube's base environment of type t, without variables, for
// CEL outside admission: the jwt authenticator's claim expressions,
// which kube compiles in the same base environment.
func BaseEnv(t EnvType) (*cel.Env, error) { return base(t) }

// ProgramOptions are kube's program options: cost tracking with the
// per-call limit.
func ProgramOptions() []cel.ProgramOption { return programOptions() }
