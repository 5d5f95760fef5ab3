"""docs/editors.md quotes every file under editors/ exactly (the tested snippets cannot drift from the docs),
and the config files there parse."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from .conftest import EDITORS, ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DOC = ROOT / "docs" / "editors.md"
FILES = sorted(p for p in EDITORS.rglob("*") if p.is_file())


def _blocks() -> list[str]:
    return [m.group(1) for m in re.finditer(r"^```[a-z]*\n(.*?)^```$", DOC.read_text(), re.S | re.M)]


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(EDITORS)) for p in FILES])
def test_docs_quote_the_file_exactly(path: Path) -> None:
    rel = path.relative_to(ROOT).as_posix()
    text = path.read_text()
    assert text in _blocks(), f"docs/editors.md must quote {rel} verbatim in a fenced block"
    assert f"`{rel}`" in DOC.read_text(), f"docs/editors.md must name {rel}"


def test_editor_files_parse() -> None:
    for path in FILES:
        if path.suffix == ".json" or path.name.endswith(".sublime-settings"):
            json.loads(path.read_text())
        elif path.suffix == ".toml":
            tomllib.loads(path.read_text())
    jupyter = json.loads((EDITORS / "jupyterlab" / "jupyter_server_config.json").read_text())
    spec = jupyter["LanguageServerManager"]["language_servers"]["bprop-lsp"]
    assert spec["argv"] == ["bprop-lsp", "serve"] and spec["version"] == 2


def test_every_snippet_runs_bprop_lsp_serve() -> None:
    for path in FILES:
        text = path.read_text()
        if path.name in {"Cargo.toml", "extension.toml", "settings.json"} or "fix" in path.stem:
            continue
        assert "bprop-lsp" in text and "serve" in text, f"{path} does not start `bprop-lsp serve`"
