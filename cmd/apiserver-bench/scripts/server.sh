# Sourced by bench.sh and profile.sh: start_server starts bin/apiserver
# from apiserver.yaml on a fresh embedded etcd in a temp state dir, on a
# loopback port, waits for /readyz and sets $state, $port and $etcd (the
# embedded etcd's client URL, from stateDir/etcd.endpoint; it takes the
# client certificate $state/pki/etcd-client.crt/.key, CA etcd-ca.crt). The
# server stops and the state dir goes when the script exits.
state=$(mktemp -d "${TMPDIR:-/tmp}/kpipe-bench.XXXXXX")
port=${BENCH_PORT:-$((20000 + RANDOM % 20000))}
pid=""
stop_server() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"
		wait "$pid" || true
	fi
	rm -rf "$state"
}
trap stop_server EXIT

start_server() {
	local log="$state/apiserver.log"
	./bin/apiserver --config apiserver.yaml --state-dir "$state" \
		--bind-address 127.0.0.1 --secure-port "$port" --log-level warn >"$log" 2>&1 &
	pid=$!
	for _ in $(seq 1 300); do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "the server exited; its log:" >&2
			cat "$log" >&2
			return 1
		fi
		if [ -f "$state/pki/ca.crt" ] && [ -f "$state/etcd.endpoint" ] &&
			curl -sf --cacert "$state/pki/ca.crt" "https://127.0.0.1:$port/readyz" >/dev/null 2>&1; then
			etcd=$(cat "$state/etcd.endpoint")
			echo "server on https://127.0.0.1:$port, etcd at $etcd, state in $state" >&2
			return 0
		fi
		sleep 0.1
	done
	echo "/readyz not 200 after 30s; the server's log:" >&2
	cat "$log" >&2
	return 1
}
