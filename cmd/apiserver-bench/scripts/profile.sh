#!/usr/bin/env bash
# make bench-profile: the server (see server.sh) under the create workload,
# profiled through /debug/pprof as the admin: var/$wl.cpu.pprof and
# var/$wl.allocs.pprof (allocations during the window), and the top of
# each printed. PROFILE_SECONDS is the window (default 20); PROFILE_WORKLOAD
# profiles another workload (get, update, mixed) into var/<workload>.*.pprof.
set -euo pipefail
cd "$(dirname "$0")/../../.."
. cmd/apiserver-bench/scripts/server.sh
start_server

secs=${PROFILE_SECONDS:-20}
mkdir -p var
kc="$state/admin.kubeconfig"
# Enough creates to outlast the window.
wl=${PROFILE_WORKLOAD:-create}
./bin/apiserver-bench --kubeconfig "$kc" --workload "$wl" --ops 1000000 --cleanup=false --quiet >/dev/null &
load=$!
sleep 2
# curl with the admin's client certificate out of admin.kubeconfig.
for k in client-certificate-data:admin.crt client-key-data:admin.key; do
	sed -n "s/^ *${k%%:*}: *//p" "$kc" | base64 -d >"$state/${k#*:}"
done
fetch() {
	curl -sSf --cacert "$state/pki/ca.crt" --cert "$state/admin.crt" --key "$state/admin.key" \
		-o "$2" "https://127.0.0.1:$port$1"
}
fetch "/debug/pprof/profile?seconds=$secs" var/$wl.cpu.pprof &
cpu=$!
fetch "/debug/pprof/allocs?seconds=$secs" var/$wl.allocs.pprof
wait "$cpu"
kill "$load" 2>/dev/null || true
wait "$load" 2>/dev/null || true
go tool pprof -top -nodecount=35 bin/apiserver var/$wl.cpu.pprof
go tool pprof -top -nodecount=35 -sample_index=alloc_space bin/apiserver var/$wl.allocs.pprof
