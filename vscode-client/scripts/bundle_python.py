"""Fill ``bundled/`` for the .vsix: ``bundled/libs`` = the bprop_lsp server package + its pinned pure-Python
dependencies, ``bundled/tool/bprop_lsp_server.py`` = the entry script.

usage: python3 scripts/bundle_python.py        (run by ``npm run bundle`` / ``npm run package``)
The Python running it needs pip; it only downloads (PyPI, pinned, hash-checked) pure-Python wheels.

Wheels are downloaded once (from PyPI, hash-checked) into ``.wheelhouse/``; later runs install from
there with ``--no-index``, so re-bundling needs no network at all.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent          # vscode-client/
REPO = HERE.parent
REQS = HERE / "python" / "requirements.txt"
WHEELHOUSE = HERE / ".wheelhouse"
BUNDLED = HERE / "bundled"
LIBS = BUNDLED / "libs"
TOOL = BUNDLED / "tool"
# BPROP_LSP_SERVER_SRC: bundle another checkout of the server package (a directory named bprop_lsp)
SERVER_PKG = Path(os.environ.get("BPROP_LSP_SERVER_SRC") or REPO / "server" / "bprop_lsp").resolve()


def pinned() -> list[tuple[str, str]]:
    out = []
    for line in REQS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split()[0].split("==")
            out.append((name, version))
    return out


def have_all_wheels() -> bool:
    names = [p.name.lower() for p in WHEELHOUSE.glob("*.whl")]
    for name, version in pinned():
        stem = name.lower().replace("-", "_") + "-" + version + "-"
        if not any(n.startswith(stem) for n in names):
            return False
    return True


def pip(*args: str) -> None:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def main() -> int:
    if not SERVER_PKG.is_dir():
        sys.exit(f"bundle_python: server package not found at {SERVER_PKG}")
    WHEELHOUSE.mkdir(exist_ok=True)
    if not have_all_wheels():
        # pure-Python wheels only, whatever Python runs this script: the .vsix must work on 3.10+
        pip("download", "--quiet", "--no-deps", "--require-hashes", "--only-binary", ":all:",
            "--implementation", "py", "--abi", "none", "--platform", "any", "--python-version", "3.10",
            "-d", str(WHEELHOUSE), "-r", str(REQS))
    shutil.rmtree(BUNDLED, ignore_errors=True)
    pip("install", "--quiet", "--no-index", "--find-links", str(WHEELHOUSE), "--no-deps", "--require-hashes",
        "--no-compile", "--target", str(LIBS), "-r", str(REQS))
    shutil.copytree(SERVER_PKG, LIBS / "bprop_lsp", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    TOOL.mkdir(parents=True)
    shutil.copy2(HERE / "python" / "bprop_lsp_server.py", TOOL / "bprop_lsp_server.py")
    for junk in LIBS.glob("*.dist-info"):
        # keep METADATA/licences (attribution), drop RECORD/INSTALLER: they name absolute build paths
        for name in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json"):
            (junk / name).unlink(missing_ok=True)
    shutil.rmtree(LIBS / "bin", ignore_errors=True)
    print(f"bundle_python: {LIBS} ready ({sum(1 for _ in LIBS.rglob('*.py'))} .py files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
