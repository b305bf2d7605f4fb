#!/usr/bin/env bash
# Installs the MCP servers from npm that the tests run (servers that are not ours):
# @modelcontextprotocol/server-filesystem, pinned with its dependencies in
# .ci/node/package-lock.json, into .ci/node/node_modules (internal/testkit/mcptest finds it there).
# Installs Node.js from Debian first when npm is missing. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/node"

install_node() {
	DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm >/dev/null
}
if ! command -v npm >/dev/null 2>&1; then
	if [ "$(id -u)" -eq 0 ]; then
		install_node
	elif command -v sudo >/dev/null 2>&1; then
		sudo -n bash -c "$(declare -f install_node); install_node"
	else
		echo "node.sh: npm is missing and installing it needs root (apt-get install nodejs npm)" >&2
		exit 1
	fi
fi

if [ -x node_modules/.bin/mcp-server-filesystem ] && [ node_modules/.package-lock.json -nt package-lock.json ]; then
	exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
