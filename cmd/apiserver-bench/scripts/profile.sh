#!/usr/bin/env bash
# make bench-profile: the server (see server.sh) under the create workload,
# profiled through /debug/pprof as the admin: var/create.cpu.pprof and
# var/create.allocs.pprof (allocations during the window), and the top of
# each printed. PROFILE_SECONDS is the window (default 20).
# PROFILE_WORKLOAD=get|update|mixed|watch profiles another workload
# (watch: 200 watchers, 40,000 writes) into var/<workload>.{cpu,allocs}.pprof.
set -euo pipefail
cd "$(dirname "$0")/../../.."
. cmd/apiserver-bench/scripts/server.sh
start_server

secs=${PROFILE_SECONDS:-20}
workload=${PROFILE_WORKLOAD:-create}
case $workload in
create | get | update | mixed) ops=1000000 ;;
watch) ops=40000 ;;
*)
	echo "PROFILE_WORKLOAD: create, get, update, mixed or watch, not $workload" >&2
	exit 1
	;;
esac
mkdir -p var
kc="$state/admin.kubeconfig"
# Enough writes to outlast the window.
./bin/apiserver-bench --kubeconfig "$kc" --workload "$workload" --ops "$ops" --cleanup=false --quiet >/dev/null &
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
fetch "/debug/pprof/profile?seconds=$secs" "var/$workload.cpu.pprof" &
cpu=$!
fetch "/debug/pprof/allocs?seconds=$secs" "var/$workload.allocs.pprof"
wait "$cpu"
kill "$load" 2>/dev/null || true
wait "$load" 2>/dev/null || true
go tool pprof -top -nodecount=35 bin/apiserver "var/$workload.cpu.pprof"
go tool pprof -top -nodecount=35 -sample_index=alloc_space bin/apiserver "var/$workload.allocs.pprof"
