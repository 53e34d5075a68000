#!/usr/bin/env bash
# make bench: the server (see server.sh) against bin/apiserver-bench, with
# the floor (--floor) and its own etcd as the baselines. Prints the table
# and writes var/bench.json. BENCH_FLAGS adds bench flags.
set -euo pipefail
cd "$(dirname "$0")/../../.."
. cmd/apiserver-bench/scripts/server.sh
start_server

mkdir -p var
# shellcheck disable=SC2086 # BENCH_FLAGS is a list of flags
./bin/apiserver-bench --kubeconfig "$state/admin.kubeconfig" --etcd-endpoints "$etcd" \
	--etcd-cafile "$state/pki/etcd-ca.crt" --etcd-certfile "$state/pki/etcd-client.crt" \
	--etcd-keyfile "$state/pki/etcd-client.key" \
	--workload create,get,list,watch --list-concurrency 1 \
	--floor --json-out var/bench.json ${BENCH_FLAGS:-}
