#!/usr/bin/env bash
# Install code-server 4.100.3 (VS Code 1.100.3; the newest code-server whose engine is node 20) from npm,
# pinned by scripts/code-server/package-lock.json, into PREFIX (default: vscode-client/.vscode-test/code-server).
# Needs: apt libkrb5-dev (kerberos native build), ripgrep (replaces a GitHub download), g++, make.
# usage: install-code-server.sh [PREFIX]   ->  PREFIX/node_modules/.bin/code-server
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix=${1:-$here/../.vscode-test/code-server}
want=4.100.3
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
bin=$prefix/node_modules/.bin/code-server
if [ -x "$bin" ] && cmp -s "$here/code-server/package-lock.json" "$prefix/package-lock.json"; then
  exit 0
fi
# @vscode/ripgrep's postinstall downloads rg from api.github.com unless this cache file exists
rgcache="${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11"
if [ ! -f "$rgcache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" ]; then
  mkdir -p "$rgcache"
  t=$(mktemp -d); cp "$(command -v rg)" "$t/rg"
  tar czf "$rgcache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$t" rg; rm -rf "$t"
fi
cp "$here/code-server/package.json" "$here/code-server/package-lock.json" "$prefix/"
cd "$prefix"
# nodedir: node-gyp must use the local headers (/usr/include/node), never download them
# unsafe_perm: code-server's postinstall refuses to run as root without it (npm 11 warns; harmless)
# yes: node-pty's postinstall runs `npx node-gyp`, which a `yes=false` npmrc would cancel
node_dir=${npm_config_nodedir:-$(dirname "$(dirname "$(command -v node)")")}
[ -f "$node_dir/include/node/node.h" ] || node_dir=/usr
echo "install-code-server: npm ci code-server@$want into $prefix (native builds, ~1-2 min)"
npm_config_nodedir=$node_dir npm_config_unsafe_perm=true npm_config_yes=true \
  npm ci --foreground-scripts --no-audit --no-fund --loglevel=error > "$prefix/install.log" 2>&1 || {
    tail -40 "$prefix/install.log"; echo "install-code-server: npm ci failed (log: $prefix/install.log)"; exit 1; }
env HOME="$prefix/home" XDG_CONFIG_HOME="$prefix/home/config" XDG_DATA_HOME="$prefix/home/data" "$bin" --version | grep -q "^$want " || { echo "install-code-server: unexpected version: $("$bin" --version)"; exit 1; }
