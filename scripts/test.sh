#!/usr/bin/env bash
# The whole test suite, on any machine with Python >= 3.10 (and its venv module):
#
#   bash scripts/test.sh [--with-editors] [--with-vscode] [PYTEST ARGS...]
#
# 1. makes .venv (with $PYTHON, default python3) and installs the package with its `test` extra from PyPI
#    (skipped when .venv already holds this pyproject.toml's install: a later run needs no network);
# 2. the Python tests (pytest over tests/; arguments go to pytest, e.g. `-m "not packaging" -x`);
# 3. the real-editor tests (tests/editors, marker `editor`: Emacs/Eglot/lsp-mode, Vim/ALE, Neovim 0.7 from apt
#    through scripts/install-editors.sh, Neovim 0.11 from the test extra) -- ONLY when asked: `--with-editors`,
#    BPROP_TEST_EDITORS=1, or CI=true. Otherwise they skip, each with the reason (nothing is installed);
# 4. the VS Code extension inside a real VS Code (vscode-client/scripts/test-in-vscode.sh: node >= 20 + npm,
#    apt chromium, g++, make, libkrb5-dev, ripgrep) -- ONLY when asked: `--with-vscode`, BPROP_TEST_VSCODE=1,
#    or CI=true. Otherwise it is skipped with the reason.
#
# Asked-for parts that cannot run FAIL (exit 1): nothing is silently left out in CI. Never prompts: apt runs
# only as root or through passwordless `sudo -n`.
# Network: PyPI on the first run (and for the packaging test, which builds the wheel in an isolated
# environment); with the editors, the Debian archive; with VS Code, the Debian archive and the npm registry.
# Switches: PYTHON, BPROP_TEST_EDITORS=0|1, BPROP_TEST_VSCODE=0|1 (SKIP_VSCODE=1 = BPROP_TEST_VSCODE=0),
#   BPROP_EDITORS_NEOVIM07=0 (scripts/install-editors.sh), and those of vscode-client/scripts/test-in-vscode.sh.
# Exit status: 0 when every part that ran passed (pytest's "no tests collected" counts as passed), 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
say() { echo "test.sh: $*"; }
die() { echo "test.sh: $*" >&2; exit 1; }

truthy() { case "${1:-}" in 1|true|yes|on|TRUE|True|YES) return 0;; *) return 1;; esac; }
in_ci() { truthy "${CI:-}"; }

editors=${BPROP_TEST_EDITORS:-}
vscode=${BPROP_TEST_VSCODE:-}
[ -z "$vscode" ] && [ -n "${SKIP_VSCODE:-}" ] && vscode=0
pytest_args=()
for arg in "$@"; do
  case "$arg" in
    --with-editors) editors=1 ;;
    --no-editors) editors=0 ;;
    --with-vscode) vscode=1 ;;
    --no-vscode) vscode=0 ;;
    *) pytest_args+=("$arg") ;;
  esac
done
if [ -z "$editors" ]; then if in_ci; then editors=1; else editors=0; fi; fi
if [ -z "$vscode" ]; then if in_ci; then vscode=1; else vscode=0; fi; fi
truthy "$editors" && editors=1 || editors=0
truthy "$vscode" && vscode=1 || vscode=0

# --- 1. the project venv ------------------------------------------------------------------------------------
python=${PYTHON:-python3}
command -v "$python" >/dev/null || die "no '$python' on PATH: install Python >= 3.10 (or set PYTHON=/path/to/python3)"
version=$("$python" -c 'import platform; print(platform.python_version())' 2>/dev/null) \
  || die "'$python' does not run: install Python >= 3.10 (or set PYTHON=/path/to/python3)"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
  || die "'$python' is Python $version; bprop-lsp needs >= 3.10 (set PYTHON=...)"
venv_ok() { [ -x .venv/bin/python ] && .venv/bin/python -m pip --version >/dev/null 2>&1; }
if ! venv_ok; then
  rm -rf .venv  # a half-made venv (no pip) from an earlier failed attempt
  say "creating .venv with $python"
  if ! out=$("$python" -m venv .venv 2>&1) || ! venv_ok; then
    rm -rf .venv
    echo "$out" >&2
    die "'$python -m venv' cannot make a virtual environment with pip. On Debian/Ubuntu install the venv module: apt-get install python3-venv (as root); elsewhere use a Python that includes venv and ensurepip."
  fi
fi
stamp=.venv/.bprop-test-install
want_stamp="$(cat pyproject.toml | sha256sum | cut -d' ' -f1) $root"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want_stamp" ]; then
  say "installing bprop-lsp and its test extra into .venv (from PyPI)"
  .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test]" \
    || die "pip could not install the test extra: it needs network access to PyPI (or a mirror set with PIP_INDEX_URL)"
  echo "$want_stamp" > "$stamp"
fi
export PATH="$root/.venv/bin:$PATH"

status=0
# --- 2. the real editors (installed only when asked) --------------------------------------------------------
if [ "$editors" = 1 ]; then
  export BPROP_TEST_EDITORS=1
  if ! bash scripts/install-editors.sh; then
    say "FAILED: the editor tests were asked for (--with-editors, BPROP_TEST_EDITORS=1 or CI=true) but scripts/install-editors.sh could not install the editors"
    status=1
  fi
else
  export BPROP_TEST_EDITORS=0
  say "editor tests: skipped (not asked for). --with-editors (or BPROP_TEST_EDITORS=1; CI=true does) installs Emacs, Vim/ALE and Neovim 0.7 with apt (root or passwordless sudo, the Debian archive) and runs them"
fi

# --- 3. pytest ----------------------------------------------------------------------------------------------
pyst=0
python -m pytest -q -p no:cacheprovider -rs ${pytest_args[@]+"${pytest_args[@]}"} || pyst=$?
if [ "$pyst" = 5 ]; then
  say "pytest collected no tests for these arguments (not a failure)"
elif [ "$pyst" != 0 ]; then
  status=1
fi

# --- 4. the VS Code extension inside a real VS Code (only when asked) ---------------------------------------
if [ "$vscode" = 1 ]; then
  BPROP_TEST_VSCODE=1 bash vscode-client/scripts/test-in-vscode.sh || status=1
else
  missing=()
  command -v node >/dev/null || missing+=("node >= 20")
  command -v npm >/dev/null || missing+=("npm")
  command -v apt-get >/dev/null || missing+=("apt-get (Debian/Ubuntu)")
  lacks=$(printf '%s, ' ${missing[@]+"${missing[@]}"}); lacks=${lacks%, }
  say "VS Code tests: skipped (not asked for${lacks:+; this machine also lacks: $lacks}). --with-vscode (or BPROP_TEST_VSCODE=1; CI=true does) runs them: node >= 20 with npm, apt + root for chromium, g++, make, libkrb5-dev and ripgrep, network to the npm registry; about 13 min the first time"
fi

if [ "$status" = 0 ]; then say "PASSED"; else say "FAILED"; fi
exit $status
