#!/usr/bin/env bash
# The VS Code extension, tested inside a real VS Code (code-server 4.100.3 = VS Code 1.100.3, node 20),
# from a fresh machine. Installs only what is missing, from apt and npm (nothing else is downloaded):
#   apt  chromium (Playwright drives it), libkrb5-dev g++ make (code-server's native modules), ripgrep
#   npm  `npm ci` here (vscode-languageclient; typescript, @vscode/vsce, mocha, playwright-core),
#        `npm ci` of scripts/code-server (code-server 4.100.3) into .vscode-test/code-server
#   PyPI the server's pinned pure-Python dependencies (once, into .wheelhouse/) for the .vsix
# Then: compile, the unit tests (node --test out/unit), bundle, `vsce package` (in a network namespace with no
#   network when possible), check the .vsix (icon, rule pages, README links: scripts/check-vsix.js), and
#   1. the mocha suite (src/test/suite) inside code-server's real extension host, with the extension
#      loaded from the unpacked .vsix: BP001 at the def line, quick fix, fix-all, a setting reaching the
#      server, restart after the server is killed, pyproject.toml not overridden by VS Code defaults,
#      bprop-lsp.path, notebook cells;
#   1b. the same suite in an untrusted workspace whose settings name a program (which must never run), with
#       a python3 in the workspace first on PATH and ${workspaceFolder} in the user settings (never used);
#   2. a Playwright smoke test of the workbench with the .vsix installed: squiggle, Problems-panel row,
#      quick fix through Ctrl+., save. Screenshots and logs go to $BPROP_ARTIFACTS (.artifacts/vscode).
# Exit status: 0 all passed, 1 a test failed, 2 setup failed (e.g. no node >= 20, no apt-get, not root and no
# passwordless sudo: it never prompts). scripts/test.sh runs it only when asked (--with-vscode, BPROP_TEST_VSCODE=1
# or CI=true) and otherwise says it skipped it.
# Env: BPROP_ARTIFACTS, BPROP_VSCODE_TEST_DIR (caches, default vscode-client/.vscode-test),
#      BPROP_VSCODE_SKIP_UI=1 (mocha suite only), BPROP_TEST_GREP (mocha --grep).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
repo=$(dirname "$here")
cd "$here"
t0=$(date +%s)
say() { echo "test-in-vscode: [$(($(date +%s) - t0))s] $*"; }
die() { echo "test-in-vscode: SETUP FAILED: $*" >&2; exit 2; }

artifacts=${BPROP_ARTIFACTS:-$repo/.artifacts/vscode}
cache=${BPROP_VSCODE_TEST_DIR:-$here/.vscode-test}
mkdir -p "$artifacts" "$cache"
artifacts=$(cd "$artifacts" && pwd)
cache=$(cd "$cache" && pwd)
# what an earlier run left (only the names this script writes)
rm -rf "$artifacts"/*.png "$artifacts"/*.log "$artifacts"/*-vscode-logs

# the project venv (scripts/test.sh creates it) provides python3 with pip for bundling
[ -x "$repo/.venv/bin/python" ] && export PATH="$repo/.venv/bin:$PATH"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

# --- 0. what cannot be installed here, then system packages (only those missing) ------------------------
command -v node >/dev/null || die "node (>= 20) with npm is needed (Debian: apt-get install nodejs npm, or NodeSource's node 20)"
node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' || die "node >= 20 is needed, found $(node --version)"
command -v npm >/dev/null || die "npm is needed (it comes with node)"
command -v python3 >/dev/null || die "python3 (>= 3.10, with pip) is needed"
missing=()
if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
  for p in chromium rg g++ make; do command -v "$p" >/dev/null || missing+=("$p"); done
  ((${#missing[@]} == 0)) || die "not a Debian-like system (no apt-get): install ${missing[*]} and Kerberos headers (libkrb5-dev) yourself"
else
  for p in chromium libkrb5-dev ripgrep g++ make; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
  done
fi
if ((${#missing[@]})); then
  # never a password prompt: root, or sudo that needs none
  sudo=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo=(sudo -n); else
      die "root (or passwordless sudo) is needed to apt-get install ${missing[*]}; install them as root, then re-run"
    fi
  fi
  say "apt-get install ${missing[*]}"
  "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null || die "apt-get update (needs the Debian archive)"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends \
    "${missing[@]}" >/dev/null || die "apt-get install ${missing[*]}"
fi

# --- 1. npm dependencies of the extension, and code-server ---------------------------------------
lock_sum=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat node_modules/.bprop-lock.sha256 2>/dev/null)" != "$lock_sum" ]; then
  say "npm ci"
  npm ci --no-audit --no-fund --loglevel=error >"$artifacts/npm-ci.log" 2>&1 || { tail -30 "$artifacts/npm-ci.log"; die "npm ci"; }
  echo "$lock_sum" > node_modules/.bprop-lock.sha256
fi
say "code-server 4.100.3"
bash scripts/install-code-server.sh "$cache/code-server" || die "code-server install"
cs=$cache/code-server/node_modules/.bin/code-server

# --- 2. build and package ------------------------------------------------------------------------
say "compile + bundle the server"
npm run --silent compile >"$artifacts/build.log" 2>&1 || { cat "$artifacts/build.log"; die "tsc"; }
status=0
say "unit tests (node --test out/unit: program settings, PATH search)"
node --test out/unit/ >"$artifacts/unit.log" 2>&1 || { cat "$artifacts/unit.log"; say "UNIT TESTS FAILED"; status=1; }
npm run --silent bundle >>"$artifacts/build.log" 2>&1 || { tail -30 "$artifacts/build.log"; die "bundling the Python server"; }
say "vsce package"
pkg=(npm run --silent package)
# prove the packaging is offline when a network namespace can be made (root, or unprivileged userns)
if unshare -n true 2>/dev/null; then pkg=(unshare -n "${pkg[@]}"); fi
"${pkg[@]}" >"$artifacts/package.log" 2>&1 || { tail -30 "$artifacts/package.log"; die "vsce package"; }
vsix=$here/bprop-lsp.vsix
[ -f "$vsix" ] || die "no $vsix"
ext_dir=$cache/ext-under-test
rm -rf "$ext_dir"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$vsix" "$ext_dir"
say "packaged $(du -k "$vsix" | cut -f1) KB; unpacked to $ext_dir/extension"
# the icon, the bundled rule pages, and README links that resolve on the Marketplace page
node scripts/check-vsix.js "$ext_dir/extension" || status=1

# --- 3. code-server helpers ----------------------------------------------------------------------
run=$(mktemp -d "${TMPDIR:-/tmp}/bprop-vscode.XXXXXX")
cs_pid=
stop_cs() {
  if [ -n "$cs_pid" ]; then
    kill -TERM -- "-$cs_pid" 2>/dev/null || kill "$cs_pid" 2>/dev/null || true
    wait "$cs_pid" 2>/dev/null || true
    cs_pid=
  fi
}
cleanup() { stop_cs; rm -rf "$run"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

# profile NAME -> $run/NAME/{user,ext,home}, user settings that keep VS Code quiet and offline
profile() {
  local d=$run/$1
  mkdir -p "$d/user/User" "$d/ext" "$d/home"
  cat >"$d/user/User/settings.json" <<EOF
{
  "workbench.startupEditor": "none",
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoUpdate": false,
  "extensions.autoCheckUpdates": false,
  "workbench.enableExperiments": false,
  "workbench.tips.enabled": false,
  "chat.disableAIFeatures": true,
  "git.enabled": false,
  "files.autoSave": "off"${2:+,
  $2}
}
EOF
}

csenv() {
  local d=$run/$1
  echo HOME="$d/home" XDG_CONFIG_HOME="$d/home/.config" XDG_DATA_HOME="$d/home/.local/share" \
    XDG_CACHE_HOME="$d/home/.cache" XDG_STATE_HOME="$d/home/.local/state" EXTENSIONS_GALLERY={}
}

# start_cs NAME WORKSPACE -> $port, $cs_pid (own process group, so stop_cs ends everything it started)
start_cs() {
  local d=$run/$1 ws=$2
  port=$(free_port)
  # shellcheck disable=SC2046
  setsid env $(csenv "$1") "$cs" --auth none --bind-addr "127.0.0.1:$port" --disable-telemetry \
    --disable-update-check ${trust_flag---disable-workspace-trust} --disable-getting-started-override \
    --user-data-dir "$d/user" --extensions-dir "$d/ext" "$ws" >"$artifacts/$1-code-server.log" 2>&1 &
  cs_pid=$!
  for _ in $(seq 1 150); do
    node -e 'require("http").get(process.argv[1],r=>process.exit(r.statusCode===200?0:1)).on("error",()=>process.exit(1))' \
      "http://127.0.0.1:$port/healthz" && return 0
    kill -0 "$cs_pid" 2>/dev/null || break
    sleep 0.2
  done
  cat "$artifacts/$1-code-server.log"
  die "code-server did not come up"
}

keep_logs() { # copy VS Code's logs (extension host, bprop-lsp output channel) into the artifacts
  [ -d "$run/$1/user/logs" ] && cp -r "$run/$1/user/logs" "$artifacts/$1-vscode-logs" 2>/dev/null || true
}

# --- 4. mocha suite inside the real extension host -----------------------------------------------
# run_exttests NAME WORKSPACE (the extension host inherits BPROP_TEST_GREP from code-server's env)
run_exttests() {
  local name=$1 ws=$2
  say "extension tests ($name) in VS Code 1.100.3 (code-server on port $port)"
  timeout 600 node scripts/run-exttests.js "http://127.0.0.1:$port" "$ws" \
    "$ext_dir/extension" "$here/out/test/suite" "$artifacts/$name-fail.png" 2>&1 | tee "$artifacts/$name.log"
}

ws=$run/ws-exttests
mkdir -p "$ws"
# an installed bprop-lsp (the project venv's) for the bprop-lsp.path test; skipped without one
if command -v bprop-lsp >/dev/null; then export BPROP_TEST_BPROP_LSP=$(command -v bprop-lsp); fi
profile exttests '"bprop-lsp.trace.server": "verbose"'
start_cs exttests "$ws"
run_exttests exttests "$ws" || status=1
stop_cs
keep_logs exttests

# the whole suite again in an untrusted workspace (restricted mode) whose settings name another program
# in bprop-lsp.path and bprop-lsp.interpreter: everything must still work, with the bundled server,
# and that program must never run (src/test/suite/untrusted.test.ts runs only here)
if [ "$status" != 0 ]; then
  say "untrusted-workspace run skipped: the suite already failed in a trusted workspace"
elif [ -z "${BPROP_TEST_GREP:-}" ]; then
  ws=$run/ws-untrusted
  mkdir -p "$ws/.vscode"
  printf '%s\n' 'from mindspore import nn' 'class MulAdd(nn.Cell):' '    def construct(self, x, y):' \
    '        return 2 * x + y' '    def bprop(self, x, y, out):' '        return 2 * out, out' >"$ws/seed.py"
  printf '#!/bin/sh\ntouch "%s/evil-ran"\nexec python3 "$@"\n' "$ws" >"$ws/evil.sh"
  chmod +x "$ws/evil.sh"
  printf '{ "bprop-lsp.path": ["%s/evil.sh"], "bprop-lsp.interpreter": ["%s/evil.sh"] }\n' "$ws" "$ws" >"$ws/.vscode/settings.json"
  # a python3 in the workspace and in its bin/, both first on PATH (bin/ and "."): the PATH search must skip them
  mkdir -p "$ws/bin" && cp "$ws/evil.sh" "$ws/bin/python3" && cp "$ws/evil.sh" "$ws/python3"
  # user settings naming the workspace through a variable: not expanded in an untrusted workspace
  profile untrusted '"security.workspace.trust.enabled": true, "security.workspace.trust.startupPrompt": "never", "security.workspace.trust.emptyWindow": false, "bprop-lsp.interpreter": ["${workspaceFolder}/evil.sh"]'
  sed -i 's/"security.workspace.trust.enabled": false,//' "$run/untrusted/user/User/settings.json"
  PATH="$ws/bin:.:$PATH" trust_flag= start_cs untrusted "$ws"
  run_exttests untrusted "$ws" || status=1
  stop_cs
  keep_logs untrusted
  [ ! -e "$ws/evil-ran" ] || { say "an executable named by untrusted workspace settings RAN"; status=1; }
fi
if [ "$status" = 0 ]; then say "extension tests passed"; else say "EXTENSION TESTS FAILED (logs: $artifacts/exttests.log, $artifacts/untrusted.log)"; fi

# --- 5. Playwright smoke test of the workbench, .vsix installed -----------------------------------
if [ -z "${BPROP_VSCODE_SKIP_UI:-}" ]; then
  ws=$run/ws-ui
  mkdir -p "$ws"
  printf '%s\n' 'from mindspore import nn' 'class MulAdd(nn.Cell):' '    def construct(self, x, y):' \
    '        return 2 * x + y' '    def bprop(self, x, y, out):' '        return 2 * out, out' >"$ws/seed.py"
  # the bundled server must not need the user's packages: run it on Debian's bare python3 when there is one
  interp=
  if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    interp='"bprop-lsp.interpreter": ["/usr/bin/python3"]'
  fi
  profile ui "$interp"
  # shellcheck disable=SC2046
  env $(csenv ui) "$cs" --user-data-dir "$run/ui/user" --extensions-dir "$run/ui/ext" --install-extension "$vsix" \
    >"$artifacts/ui-install.log" 2>&1 || { cat "$artifacts/ui-install.log"; die "installing the .vsix into code-server"; }
  start_cs ui "$ws"
  say "Playwright smoke test of the workbench (code-server on port $port)"
  ui=0
  timeout 300 node scripts/ui-smoke.js "http://127.0.0.1:$port" "$ws" "$ws/seed.py" "$artifacts" 2>&1 \
    | tee "$artifacts/ui-smoke.log" || ui=1
  stop_cs
  keep_logs ui
  if [ "$ui" = 0 ]; then say "UI smoke test passed"; else say "UI SMOKE TEST FAILED (log: $artifacts/ui-smoke.log)"; status=1; fi
fi

say "done: $([ "$status" = 0 ] && echo PASSED || echo FAILED); artifacts in $artifacts"
exit $status
