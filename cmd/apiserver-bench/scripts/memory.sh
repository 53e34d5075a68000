#!/usr/bin/env bash
# make bench-memory: the memory and startup targets of issue #9. Starts an
# external etcd (bin/apiserver etcd) and the server from apiserver.yaml on
# it, creates MEMORY_OBJECTS (10,000) ConfigMaps of 1 KiB with
# bin/apiserver-bench, and reads the server's VmRSS from /proc. Then it
# stops the server, starts it again on the same state dir and etcd, and
# times it from exec to the first /readyz 200, and reads VmRSS again once
# the watch caches hold the objects. Prints the figures and writes
# var/bench-memory.json.
set -euo pipefail
cd "$(dirname "$0")/../../.."

objects=${MEMORY_OBJECTS:-10000}
state=$(mktemp -d "${TMPDIR:-/tmp}/kpipe-memory.XXXXXX")
base=$((20000 + RANDOM % 20000))
port=${BENCH_PORT:-$base}
ecp=$((base + 1))
epp=$((base + 2))
etcd_url="http://127.0.0.1:$ecp"
etcd_pid=""
pid=""
cleanup() {
	for p in $pid $etcd_pid; do
		if kill -0 "$p" 2>/dev/null; then
			kill -TERM "$p"
			wait "$p" || true
		fi
	done
	rm -rf "$state"
}
trap cleanup EXIT

./bin/apiserver etcd --data-dir "$state/etcd" --name bench \
	--listen-client-urls "$etcd_url" --advertise-client-urls "$etcd_url" \
	--listen-peer-urls "http://127.0.0.1:$epp" --initial-advertise-peer-urls "http://127.0.0.1:$epp" \
	>"$state/etcd.log" 2>&1 &
etcd_pid=$!
for _ in $(seq 1 300); do
	curl -sf "$etcd_url/health" >/dev/null 2>&1 && break
	sleep 0.1
done
curl -sf "$etcd_url/health" >/dev/null || {
	echo "etcd did not become healthy; its log:" >&2
	cat "$state/etcd.log" >&2
	exit 1
}

# start_kpipe starts the server and sets $pid and $ready_ms (exec to the
# first /readyz 200).
start_kpipe() {
	local log="$state/apiserver.log" t0
	t0=$(date +%s%N)
	./bin/apiserver --config apiserver.yaml --state-dir "$state/kpipe" --etcd-servers "$etcd_url" \
		--bind-address 127.0.0.1 --secure-port "$port" --log-level warn >>"$log" 2>&1 &
	pid=$!
	for _ in $(seq 1 3000); do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "the server exited; its log:" >&2
			cat "$log" >&2
			return 1
		fi
		if [ -f "$state/kpipe/pki/ca.crt" ] &&
			curl -sf --cacert "$state/kpipe/pki/ca.crt" "https://127.0.0.1:$port/readyz" >/dev/null 2>&1; then
			ready_ms=$((($(date +%s%N) - t0) / 1000000))
			return 0
		fi
		sleep 0.01
	done
	echo "/readyz not 200 after 30s; the server's log:" >&2
	cat "$log" >&2
	return 1
}

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$pid/status"; }
hwm_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$pid/status"; }

start_kpipe
first_ready_ms=$ready_ms
kc="$state/kpipe/admin.kubeconfig"
idle_kb=$(rss_kb)
./bin/apiserver-bench --kubeconfig "$kc" --workload create --ops "$objects" --size 1024 \
	--cleanup=false --quiet >/dev/null
sleep 2
loaded_kb=$(rss_kb)
loaded_hwm_kb=$(hwm_kb)
# heap_profile NAME saves the server's heap profile as var/NAME.heap.pprof
# and prints its top and the Go runtime's view of memory.
heap_profile() {
	[ -n "${MEMORY_HEAP_PROFILE:-}" ] || return 0
	for k in client-certificate-data:admin.crt client-key-data:admin.key; do
		sed -n "s/^ *${k%%:*}: *//p" "$kc" | base64 -d >"$state/${k#*:}"
	done
	mkdir -p var
	local get="curl -sSf --cacert $state/kpipe/pki/ca.crt --cert $state/admin.crt --key $state/admin.key"
	$get -o "var/$1.heap.pprof" "https://127.0.0.1:$port/debug/pprof/heap"
	echo "== heap, $1" >&2
	go tool pprof -top -nodecount=25 -sample_index=inuse_space bin/apiserver "var/$1.heap.pprof" >&2
	$get "https://127.0.0.1:$port/metrics" | grep -E '^go_memstats_(heap_(alloc|idle|inuse|released|sys)|sys)_bytes|^go_gc_gogc' >&2 || true
}
heap_profile loaded

kill -TERM "$pid"
wait "$pid" || true
pid=""
start_kpipe
restart_ready_ms=$ready_ms
# The caches fill in the background after /readyz; give them time.
sleep 3
restart_kb=$(rss_kb)
heap_profile restart

printf '%-34s %10s\n' "objects (1 KiB ConfigMaps)" "$objects" \
	"RSS idle, fresh state" "$((idle_kb / 1024)) MB" \
	"RSS after the creates" "$((loaded_kb / 1024)) MB" \
	"peak RSS (VmHWM) during creates" "$((loaded_hwm_kb / 1024)) MB" \
	"RSS after restart, caches full" "$((restart_kb / 1024)) MB" \
	"startup, fresh state" "${first_ready_ms} ms" \
	"startup, existing state" "${restart_ready_ms} ms"
mkdir -p var
printf '{"workload":"memory","objects":%d,"rss_idle_kb":%d,"rss_loaded_kb":%d,"rss_peak_kb":%d,"rss_restart_kb":%d,"startup_fresh_ms":%d,"startup_existing_ms":%d}\n' \
	"$objects" "$idle_kb" "$loaded_kb" "$loaded_hwm_kb" "$restart_kb" "$first_ready_ms" "$restart_ready_ms" >var/bench-memory.json
