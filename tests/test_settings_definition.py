"""One settings definition (engine/options.py): the loader, the CLI flags, the server's keys, VS Code's settings,
the JSON Schema and docs/settings.md are derived from it, and agree on what each value means."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bprop_lsp.checker import RULE_NAMES
from bprop_lsp.cli.main import _parser, main
from bprop_lsp.cli.rule_docs import generated_files
from bprop_lsp.cli.settings_schema import settings_schema, vscode_setting
from bprop_lsp.engine.options import OPTIONS, option
from bprop_lsp.engine.settings import Settings, merge

ROOT = Path(__file__).resolve().parents[1]
SEED = (ROOT / "tests" / "fixtures" / "seed_muladd.py").read_text(encoding="utf-8")


def _validator():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs/tool-bprop-lsp.schema.json").read_text())
    return jsonschema.Draft7Validator(schema)


# --- the schema and the loader agree (issue 24, item 4) ---------------------------------------------------------

ACCEPTED = [
    {"inlay-hints": True}, {"inlay_hints": {"enable": False}}, {"inlayHints": True},
    {"select": ["bp001"]}, {"select": ["Bp0"]}, {"select": "bp001, BP02"}, {"select": [" BP001 "]},
    {"mode": "GRAPH"}, {"mode": "PyNative"}, {"mode": "auto"}, {"select": ["all"]},
    {"select": ["BP9"]}, {"extend-select": ["BP050"]}, {"per-file-ignores": {"tests/**": ["BP050"], "!src/*": "BP0"}},
    {"exclude": ["legacy/*"], "extend-exclude": ["gen/**"]}, {"force-exclude": True}, {"select": []},
]
REJECTED = [
    {"select": ["BP91"]}, {"select": ["BP999"]}, {"select": ["BP8"]}, {"select": "BP999"}, {"ignore": ["BP0O1"]},
    {"mode": "eager"}, {"selct": ["BP001"]}, {"exclude": "legacy/*"}, {"inlay-hints": "yes"},
    {"per-file-ignores": {"tests/*": ["BP9999"]}}, {"per-file-ignores": ["tests/*"]}, {"force-exclude": "yes"},
    {"select": [""]}, {"select": ""},
]


@pytest.mark.parametrize("table", ACCEPTED, ids=repr)
def test_schema_accepts_what_the_loader_accepts(table):
    assert not [e.message for e in _validator().iter_errors(table)]
    result = merge(Settings(), table, "t", rules=RULE_NAMES)
    assert not result.errors
    # (the one warning allowed: an empty select says it checks nothing)
    assert not [w for w in result.warnings if "is empty" not in w]


@pytest.mark.parametrize("table", REJECTED, ids=repr)
def test_schema_rejects_what_the_loader_rejects(table):
    assert list(_validator().iter_errors(table)), table
    result = merge(Settings(), table, "t", rules=RULE_NAMES)
    assert result.warnings or result.errors


@pytest.mark.parametrize("table", [t for t in ACCEPTED if "inlay" not in next(iter(t)).lower()] +
                         [{"inlay-hints": True}], ids=repr)
def test_cli_accepts_every_table_the_schema_accepts(tmp_path, capsys, table):
    import tomllib  # noqa: F401 - (3.11+; the tables are written as TOML below)

    def toml(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{json.dumps(k)} = {toml(x)}" for k, x in v.items()) + "}"
        return json.dumps(v)

    (tmp_path / "pyproject.toml").write_text("[tool.bprop-lsp]\n" + "".join(f"{k} = {toml(v)}\n" for k, v in table.items()))
    (tmp_path / "m.py").write_text("x = 1\n")
    assert main(["check", str(tmp_path / "m.py")]) == 0, capsys.readouterr().err


def test_generated_files_are_checked_in():
    for rel in ("docs/tool-bprop-lsp.schema.json", "server/bprop_lsp/docs/tool-bprop-lsp.schema.json",
                "docs/settings.md", "vscode-client/package.json"):
        assert (ROOT / rel).read_text(encoding="utf-8") == generated_files()[rel], \
            f"{rel} is stale: run python -m bprop_lsp.cli.rule_docs"


def test_vscode_settings_are_the_definitions():
    props = json.loads((ROOT / "vscode-client/package.json").read_text())["contributes"]["configuration"]["properties"]
    offered = {f"bprop-lsp.{o.editor}": o for o in OPTIONS if o.editor}
    assert offered and set(offered) <= set(props)
    for key, o in offered.items():
        assert props[key] == vscode_setting(o), key
        # the server reads the key VS Code sends (the client sends "inlayHints": {enable})
        assert option(o.editor.split(".")[0]) is o
    # and no engine setting the definition does not have is offered
    for key in props:
        name = key[len("bprop-lsp."):]
        if option(name.split(".")[0]) is not None:
            assert key in offered, key


def test_every_flag_the_definition_names_is_a_check_flag():
    _, commands = _parser()
    flags = {s for a in commands["check"]._actions for s in a.option_strings}
    for o in OPTIONS:
        if o.flag:
            assert o.flag in flags, o.flag


def test_server_keys_come_from_the_definition():
    from bprop_lsp.lsp import settings as lsp_settings

    assert lsp_settings.INLAY_HINT_KEYS == {"inlay-hints", "inlay_hints", "inlayHints"}
    assert lsp_settings._engine_keys() == {o.attr for o in OPTIONS if o.engine}


def test_settings_doc_lists_every_setting():
    doc = (ROOT / "docs/settings.md").read_text()
    for o in OPTIONS:
        assert f"## {o.key}\n" in doc
        if o.flag:
            assert f"`{o.flag}`" in doc


# --- one meaning everywhere (issue 24, item 8) ------------------------------------------------------------------

def test_empty_select_checks_nothing_in_pyproject_with_a_warning(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text("[tool.bprop-lsp]\nselect = []\n")
    (tmp_path / "m.py").write_text(SEED)
    assert main(["check", str(tmp_path / "m.py")]) == 0
    captured = capsys.readouterr()
    assert "All checks passed" in captured.out
    assert "'select' is empty: no rule is checked" in captured.err


def test_empty_select_flag_is_an_error(tmp_path, capsys):
    (tmp_path / "m.py").write_text(SEED)
    assert main(["check", "--isolated", "--select", "", str(tmp_path / "m.py")]) == 2
    assert "names no rule" in capsys.readouterr().err


def test_empty_select_in_the_editor_checks_nothing_with_a_warning(tmp_path):
    from pygls import uris

    from bprop_lsp.lsp.settings import SettingsStore

    logged, shown = [], []
    store = SettingsStore(logged.append, shown.append)
    store.set_configuration({"select": []}, {})
    settings = store.for_uri(uris.from_fs_path(str(tmp_path / "m.py")))
    assert settings.select == () and not settings.enabled("BP001")
    assert any("is empty" in m for m in logged)


def test_extend_select_adds_and_a_later_select_resets_it():
    r = merge(Settings(), {"select": ["BP001"], "extend-select": ["BP050"]}, "p", rules=RULE_NAMES).settings
    assert r.enabled("BP001") and r.enabled("BP050") and not r.enabled("BP020")
    flags = merge(r, {"select": "BP020"}, "command line", rules=RULE_NAMES).settings
    assert flags.enabled("BP020") and not flags.enabled("BP050")


def test_a_settings_problem_is_logged_once(tmp_path):
    """(item 9: each problem was logged three times: once by the store, twice by showing it)"""
    from pygls import uris

    from bprop_lsp.lsp.settings import SettingsStore

    logged, shown = [], []

    def show(message):  # what the server's show_warning does: it logs, then shows
        logged.append(message)
        shown.append(message)

    store = SettingsStore(logged.append, show)
    store.set_configuration({"selct": ["BP001"]}, {})
    store.for_uri(uris.from_fs_path(str(tmp_path / "m.py")))
    assert len(shown) == 1 and len(logged) == 1, logged


# --- glob patterns: ruff's semantics ---------------------------------------------------------------------------

@pytest.mark.parametrize("pattern,path,hit", [
    ("tests/*", "tests/a.py", True), ("tests/*", "tests/sub/a.py", True),  # (* crosses / as in ruff)
    ("tests/**", "tests/sub/a.py", True), ("*.pyi", "pkg/a.pyi", True), ("legacy_*.py", "x/legacy_1.py", True),
    ("tests/*", "src/tests_x.py", False), ("a.py", "pkg/a.py", True), ("{src,lib}/*.py", "lib/m.py", True),
    ("src/a.py", "other/src/a.py", False),
])
def test_file_patterns(tmp_path, pattern, path, hit):
    from bprop_lsp.engine.options import FilePattern

    assert FilePattern(pattern, str(tmp_path)).matches(str(tmp_path / path)) is hit


def test_per_file_ignores_and_negation(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text('[tool.bprop-lsp]\nper-file-ignores = {"tests/*" = ["BP001"], '
                                             '"!src/*" = ["BP0"]}\n')
    for rel in ("tests/t.py", "src/s.py", "other/o.py"):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text(SEED)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        main(["check", "--output-format", "concise", "."])
    finally:
        os.chdir(old)
    out = capsys.readouterr().out
    assert "src/s.py" in out and "tests/t.py" not in out and "other/o.py" not in out


def test_per_file_ignores_flag(tmp_path, capsys):
    (tmp_path / "t.py").write_text(SEED)
    assert main(["check", "--isolated", "--per-file-ignores", "t.py:BP001", str(tmp_path / "t.py")]) == 0
    assert main(["check", "--isolated", "--per-file-ignores", "t.py:BP0O1", str(tmp_path / "t.py")]) == 2
    assert "BP0O1" in capsys.readouterr().err


def test_server_applies_per_file_ignores_from_pyproject(tmp_path):
    from pygls import uris

    from bprop_lsp.lsp.settings import SettingsStore

    (tmp_path / "pyproject.toml").write_text('[tool.bprop-lsp]\nper-file-ignores = {"tests/*" = ["BP001"]}\n')
    (tmp_path / "tests").mkdir()
    store = SettingsStore(lambda m: None)
    assert not store.for_uri(uris.from_fs_path(str(tmp_path / "tests" / "t.py"))).enabled("BP001")
    assert store.for_uri(uris.from_fs_path(str(tmp_path / "m.py"))).enabled("BP001")


def test_server_reports_an_empty_select_string(tmp_path):
    from pygls import uris

    from bprop_lsp.lsp.settings import SettingsStore

    shown = []
    store = SettingsStore(lambda m: None, shown.append)
    store.set_configuration({"select": ""}, {})
    assert store.for_uri(uris.from_fs_path(str(tmp_path / "m.py"))).enabled("BP001")
    assert any("empty string" in m for m in shown)
