#!/usr/bin/env bash
# install.sh installs the two Powertools the comparison runs against, pinned,
# under .tools/ (git-ignored):
#
#   .tools/bench-python  a venv with aws-lambda-powertools (Python), boto3
#                        for its DynamoDB layer and redis (redis-py) for its
#                        Redis layer
#   .tools/bench-node    @aws-lambda-powertools/idempotency (TypeScript), the
#                        AWS SDK v3 DynamoDB clients and @redis/client that
#                        its DynamoDB and cache layers need
#
# A stamp naming the pins skips the work when it is done already.
set -euo pipefail

PY_POWERTOOLS=3.37.0
PY_BOTO3=1.44.8 # the boto3 of scripts/python-constraints.txt, for moto
PY_REDIS=8.1.0 # within aws-lambda-powertools[redis]: redis>=4.4,<9.0
TS_POWERTOOLS=2.35.0
TS_AWS_SDK=3.1162.0
TS_REDIS=6.3.1 # within the idempotency package's peer dependency ^6.2.1

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TOOLS=$ROOT/.tools
WANT="python=$PY_POWERTOOLS boto3=$PY_BOTO3 redis-py=$PY_REDIS ts=$TS_POWERTOOLS sdk=$TS_AWS_SDK redis-client=$TS_REDIS"
STAMP=$TOOLS/stamps/bench-powertools

if [[ -f $STAMP && "$(cat "$STAMP")" == "$WANT" ]] && "$TOOLS/bench-python/bin/python" -c '' 2>/dev/null; then
	exit 0
fi

printf '==> installing Powertools Python %s and TypeScript %s under .tools/\n' "$PY_POWERTOOLS" "$TS_POWERTOOLS" >&2
rm -rf "$TOOLS/bench-python" "$TOOLS/bench-node"
python3 -m venv "$TOOLS/bench-python"
"$TOOLS/bench-python/bin/pip" install --quiet --disable-pip-version-check \
	"aws-lambda-powertools==$PY_POWERTOOLS" "boto3==$PY_BOTO3" "redis==$PY_REDIS"

mkdir -p "$TOOLS/bench-node"
cat >"$TOOLS/bench-node/package.json" <<JSON
{
  "name": "bench-powertools",
  "private": true,
  "type": "module",
  "dependencies": {
    "@aws-lambda-powertools/idempotency": "$TS_POWERTOOLS",
    "@aws-sdk/client-dynamodb": "$TS_AWS_SDK",
    "@aws-sdk/lib-dynamodb": "$TS_AWS_SDK",
    "@redis/client": "$TS_REDIS"
  }
}
JSON
(cd "$TOOLS/bench-node" && npm install --silent --no-audit --no-fund --save-exact)

mkdir -p "$(dirname "$STAMP")"
printf '%s\n' "$WANT" >"$STAMP"
