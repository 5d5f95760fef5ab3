"""Where a project's modules are named from (light: no parser; the CLI asks it for every run, ``bprop`` or not):
the project folder (``pyproject.toml`` or ``.git``), ``[tool.bprop-lsp] src`` (as ruff's ``src``), a ``src/``
layout."""
from __future__ import annotations

import os
from pathlib import Path


def project_root(start: str | os.PathLike) -> Path | None:
    """The folder holding ``pyproject.toml`` or ``.git`` at or above ``start`` (a file or folder), else None."""
    here = Path(os.path.abspath(start))
    if here.is_file() or not here.exists():
        here = here.parent
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file() or (folder / ".git").exists():
            return folder
    return None


def configured_src(root: Path) -> tuple[str, ...] | None:
    """``[tool.bprop-lsp] src`` of ``root/pyproject.toml`` (a list of folders, relative to it), or None."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        try:
            import tomli as tomllib  # type: ignore
        except ImportError:
            return None
    try:
        with open(root / "pyproject.toml", "rb") as f:
            data = tomllib.load(f)
    except (OSError, ValueError):
        return None
    src = data.get("tool", {}).get("bprop-lsp", {}).get("src")
    if isinstance(src, list) and all(isinstance(s, str) for s in src):
        return tuple(src)
    return None


def import_roots(root: Path, src: tuple[str, ...] | None = None) -> list[Path]:
    """The folders modules are named from, for the project at ``root``: ``src`` (relative to ``root``) when set,
    like ruff's; else the root and, when there is one, its ``src/`` folder (a ``src`` layout)."""
    if src is None:
        src = configured_src(root)
    if src is not None:
        return [Path(os.path.normpath(root / s)) for s in src]
    roots = [root]
    if (root / "src").is_dir():
        roots.append(root / "src")
    return roots
