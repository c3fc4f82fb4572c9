#!/usr/bin/env bash
# install.sh installs the two Powertools the comparison runs against, pinned,
# under .tools/ (git-ignored):
#
#   .tools/bench-python  a venv with aws-lambda-powertools (Python) and boto3
#   .tools/bench-node    @aws-lambda-powertools/idempotency (TypeScript) and
#                        the AWS SDK v3 DynamoDB clients it needs
#
# A stamp naming the pins skips the work when it is done already.
set -euo pipefail

PY_POWERTOOLS=3.37.0
PY_BOTO3=1.44.8 # the boto3 of scripts/python-constraints.txt, for moto
TS_POWERTOOLS=2.35.0
TS_AWS_SDK=3.1162.0

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TOOLS=$ROOT/.tools
WANT="python=$PY_POWERTOOLS boto3=$PY_BOTO3 ts=$TS_POWERTOOLS sdk=$TS_AWS_SDK"
STAMP=$TOOLS/stamps/bench-powertools

if [[ -f $STAMP && "$(cat "$STAMP")" == "$WANT" ]] && "$TOOLS/bench-python/bin/python" -c '' 2>/dev/null; then
	exit 0
fi

printf '==> installing Powertools Python %s and TypeScript %s under .tools/\n' "$PY_POWERTOOLS" "$TS_POWERTOOLS" >&2
rm -rf "$TOOLS/bench-python" "$TOOLS/bench-node"
python3 -m venv "$TOOLS/bench-python"
"$TOOLS/bench-python/bin/pip" install --quiet --disable-pip-version-check \
	"aws-lambda-powertools==$PY_POWERTOOLS" "boto3==$PY_BOTO3"

mkdir -p "$TOOLS/bench-node"
cat >"$TOOLS/bench-node/package.json" <<JSON
{
  "name": "bench-powertools",
  "private": true,
  "type": "module",
  "dependencies": {
    "@aws-lambda-powertools/idempotency": "$TS_POWERTOOLS",
    "@aws-sdk/client-dynamodb": "$TS_AWS_SDK",
    "@aws-sdk/lib-dynamodb": "$TS_AWS_SDK"
  }
}
JSON
(cd "$TOOLS/bench-node" && npm install --silent --no-audit --no-fund --save-exact)

mkdir -p "$(dirname "$STAMP")"
printf '%s\n' "$WANT" >"$STAMP"
