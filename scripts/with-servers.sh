#!/usr/bin/env bash
# with-servers.sh runs a command with the test servers up:
#
#   scripts/with-servers.sh CMD [ARGS...]
#   scripts/with-servers.sh go test -race ./dynamo/...
#
# It installs the servers if needed (scripts/tools.sh), starts moto's server
# (one request at a time: scripts/moto-serialized.py) and dynalite (in
# memory) on free ports of 127.0.0.1, waits until each answers
# HTTP, exports
#
#   TEST_MOTO_ENDPOINT=http://127.0.0.1:PORT
#   TEST_DYNALITE_ENDPOINT=http://127.0.0.1:PORT
#
# runs CMD, and stops both servers however CMD ends (success, failure,
# Ctrl-C). It exits with CMD's status. The servers' logs go to a temporary
# folder that is removed on success and kept, with its tail printed, on
# failure.
#
# Both servers keep state for their whole run: tests must use their own table
# names.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS=$ROOT/.tools
START_TIMEOUT=${WITH_SERVERS_START_TIMEOUT:-60} # seconds per server

[[ $# -gt 0 ]] || { echo "usage: scripts/with-servers.sh CMD [ARGS...]" >&2; exit 2; }

"$ROOT/scripts/tools.sh" python dynalite

LOGS=$(mktemp -d "${TMPDIR:-/tmp}/with-servers.XXXXXX")
PIDS=()
STATUS=1 # what a failure before CMD ends reports

log() { printf 'with-servers: %s\n' "$*" >&2; }

show_logs() {
	local f
	for f in "$LOGS"/*.log; do
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

set +e
"$@"
STATUS=$?
set -e
