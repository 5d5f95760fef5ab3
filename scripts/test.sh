#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the tests need from the project's own
# files (pip extras, Debian packages for the editor tests, npm ci for the VS Code extension), then runs
# the Python tests (engine, CLI, packaging, language server over stdio, real editors, bounded fuzzing) and
# the VS Code tests.
#
# Needs: Python >= 3.10 with venv; for the editor and VS Code parts Debian/Ubuntu (apt-get) and root or
# passwordless sudo (Emacs, Vim, ALE, Neovim 0.7, Chromium, a C++ toolchain), node >= 20 with npm; network to
# PyPI, the Debian archive and the npm registry on the first run. First run about 25 minutes on a shared
# 2-core machine, later runs about 12 (README.md, "Testing").
# Switches: PYTHON (the interpreter that makes .venv), SKIP_VSCODE=1 (no VS Code part),
#   BPROP_EDITORS_NEOVIM07=0 (scripts/install-editors.sh), and those of vscode-client/scripts/test-in-vscode.sh.
# Arguments go to pytest, e.g. `bash scripts/test.sh -m "not editor" -x`.
# Exit status: 0 when everything passed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e ".[test]"
export PATH="$root/.venv/bin:$PATH"

status=0
# Real editors (Emacs/Eglot, Vim/ALE; Neovim comes from the test extras).
if [ -f scripts/install-editors.sh ]; then
  bash scripts/install-editors.sh || echo "test.sh: editor install failed; editor tests will say why they skip"
fi

python -m pytest -q -p no:cacheprovider "$@" || status=$?

# The VS Code extension inside a real VS Code (code-server) — see vscode-client/README.md.
if [ -f vscode-client/scripts/test-in-vscode.sh ] && [ -z "${SKIP_VSCODE:-}" ]; then
  bash vscode-client/scripts/test-in-vscode.sh || status=$?
fi
exit $status
