#!/usr/bin/env bash
# make bench: start bin/apiserver from apiserver.yaml on a fresh embedded
# etcd in a temp state dir, on a loopback port, and run bin/apiserver-bench
# against it and against its etcd (read from stateDir/etcd.endpoint).
# Prints the table and writes var/bench.json. Extra flags for the bench
# come from BENCH_FLAGS.
set -euo pipefail

cd "$(dirname "$0")/.."
state=$(mktemp -d "${TMPDIR:-/tmp}/kpipe-bench.XXXXXX")
port=${BENCH_PORT:-$((20000 + RANDOM % 20000))}
log="$state/apiserver.log"
pid=""
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"
		wait "$pid" || true
	fi
	rm -rf "$state"
}
trap cleanup EXIT

./bin/apiserver --config apiserver.yaml --state-dir "$state" \
	--bind-address 127.0.0.1 --secure-port "$port" --log-level warn >"$log" 2>&1 &
pid=$!

ready=""
for _ in $(seq 1 300); do
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "bench: the server exited; its log:" >&2
		cat "$log" >&2
		exit 1
	fi
	if [ -f "$state/pki/ca.crt" ] && [ -f "$state/etcd.endpoint" ] &&
		curl -sf --cacert "$state/pki/ca.crt" "https://127.0.0.1:$port/readyz" >/dev/null 2>&1; then
		ready=1
		break
	fi
	sleep 0.1
done
if [ -z "$ready" ]; then
	echo "bench: /readyz not 200 after 30s; the server's log:" >&2
	cat "$log" >&2
	exit 1
fi
echo "bench: server on https://127.0.0.1:$port, etcd at $(cat "$state/etcd.endpoint"), state in $state" >&2

mkdir -p var
# shellcheck disable=SC2086 # BENCH_FLAGS is a list of flags
./bin/apiserver-bench --kubeconfig "$state/admin.kubeconfig" \
	--etcd-endpoints "$(cat "$state/etcd.endpoint")" \
	--workload create,get,list,watch --list-concurrency 1 \
	--json-out var/bench.json ${BENCH_FLAGS:-}
