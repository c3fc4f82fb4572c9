#!/usr/bin/env bash
# demo.sh runs the payments example locally, end to end (`make demo`):
# moto server as DynamoDB, a local payment provider, and the payments
# function under the Lambda Runtime Interface Emulator. It sends a payment,
# its duplicate, a conflicting one and an invalid one, prints the responses,
# the idempotency records and the provider's charge count, and stops
# everything it started, also on Ctrl-C.
#
# Needs: Go and Python 3 (with venv); scripts/tools.sh installs moto and the
# emulator under .tools/ on the first run.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

scripts/tools.sh python rie

# The function as Lambda runs it, for this machine's architecture so that
# the emulator can run it; and the demo program itself. Both go in
# build/demo, the demo's own folder: make build (which make test runs)
# rewrites build/payments/bootstrap, and must not do so under a running
# demo.
mkdir -p build/demo
(cd examples/payments && GOOS=linux CGO_ENABLED=0 go build -tags lambda.norpc -o "$ROOT/build/demo/bootstrap" .)
go build -o build/demo/demo ./examples/internal/demo

# exec: the demo program gets Ctrl-C and SIGTERM itself, and stops moto and
# the emulator before it exits.
exec build/demo/demo \
	-moto .tools/venv/bin/moto_server \
	-rie .tools/bin/aws-lambda-rie \
	-bootstrap build/demo/bootstrap \
	-logs build/demo
