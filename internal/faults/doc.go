// Package faults holds fault-injection tests: etcd members and the whole
// etcd going away under load, the process killed or stopped under load,
// lost updates, a linearizability check of a concurrent history, and slow
// or broken clients. Everything listens on loopback.
//
// The quick suites run in `make test`. The slow ones carry the "faults"
// build tag and "Fault" in their names, for `make test-faults`.
package faults
