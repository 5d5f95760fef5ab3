"""What the package ships: the rule pages and the settings schema (generated, so they cannot drift), the
documentation links of findings, and the built wheel working from a fresh virtualenv."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from bprop_lsp.checker import RULE_NAMES
from bprop_lsp.cli.main import main
from bprop_lsp.cli.rule_docs import generated_files, rule_markdown
from bprop_lsp.cli.settings_schema import settings_schema
from bprop_lsp.engine import settings as settings_loader
from bprop_lsp.rules import ALL_RULES
from bprop_lsp.rules import base as rules_base

ROOT = Path(__file__).resolve().parents[1]
SEED = (
    "from mindspore import nn\n\n\n"
    "class MulAdd(nn.Cell):\n"
    "    def construct(self, x, y):\n"
    "        return 2 * x + y\n\n"
    "    def bprop(self, x, y, out):\n"
    "        return 2 * out, out\n"
)


# --- generated files ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("rel", sorted(generated_files()))
def test_shipped_file_is_the_generator_output(rel):
    """Regenerate with `python -m bprop_lsp.cli.rule_docs` when a rule or a setting changes."""
    path = ROOT / rel
    assert path.is_file(), f"{rel} is missing: run python -m bprop_lsp.cli.rule_docs"
    assert path.read_text(encoding="utf-8") == generated_files()[rel], \
        f"{rel} is stale: run python -m bprop_lsp.cli.rule_docs"


def test_no_stale_rule_page_is_shipped():
    shipped = {p.name for p in (ROOT / "server/bprop_lsp/docs/rules").glob("*.md")}
    assert shipped == {f"{r.code}.md" for r in ALL_RULES}


def test_rule_command_prints_the_bundled_page(capsys):
    for rule in ALL_RULES[:3] + ALL_RULES[-2:]:
        assert main(["rule", rule.code]) == 0
        assert capsys.readouterr().out == rule.doc_path().read_text(encoding="utf-8") == rule_markdown(rule)


# --- documentation links --------------------------------------------------------------------------------------

def test_finding_links_are_valid_file_uris_of_the_bundled_pages():
    """No website exists yet (DOCS_BASE is None): every rule links to its page inside the installed package."""
    assert rules_base.DOCS_BASE is None
    for rule in ALL_RULES:
        url = urlparse(rule.url())
        assert url.scheme == "file" and url.netloc == "" and not url.fragment and not url.query, rule.url()
        assert Path(unquote(url.path)) == rule.doc_path() and rule.doc_path().is_file()
        assert rule.doc_path().read_text(encoding="utf-8").startswith(f"## {rule.code} {rule.name}\n")


def test_docs_base_is_the_one_switch_to_a_website(monkeypatch):
    monkeypatch.setattr(rules_base, "DOCS_BASE", "https://example.org/bprop-lsp/rules/")
    assert ALL_RULES[0].url() == f"https://example.org/bprop-lsp/rules/{ALL_RULES[0].code}.md"


def test_full_output_names_the_offline_docs(tmp_path, capsys):
    seed = tmp_path / "seed.py"
    seed.write_text(SEED)
    assert main(["check", "--output-format", "full", str(seed)]) == 1
    out = capsys.readouterr().out
    assert "= docs: bprop-lsp rule BP001 (file:///" in out and "/bprop_lsp/docs/rules/BP001.md)" in out


# --- the JSON Schema of [tool.bprop-lsp] ----------------------------------------------------------------------

def _toml_blocks(text: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^```toml\n(.*?)^```$", text, re.S | re.M)]


def _tool_tables(text: str) -> list[dict]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    tables = []
    for block in _toml_blocks(text):
        if "[tool.bprop-lsp]" in block:
            tables.append(tomllib.loads(block)["tool"]["bprop-lsp"])
    return tables


def _validator():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs/tool-bprop-lsp.schema.json").read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def test_schema_lists_every_key_the_loader_accepts():
    from bprop_lsp.engine.options import OPTIONS

    props = settings_schema()["properties"]
    assert {s for o in OPTIONS for s in o.spellings()} == set(props)
    assert {o.attr for o in OPTIONS if o.engine} == settings_loader._KEYS


def test_schema_lists_every_rule_code():
    from bprop_lsp.cli.settings_schema import selector_regex

    one = re.compile(f"^{selector_regex()}$")
    for r in ALL_RULES:
        assert one.match(r.code) and one.match(r.code.lower())
    assert one.match("ALL") and not one.match("BP999")


def test_schema_validates_the_documented_examples():
    validator = _validator()
    tables = _tool_tables((ROOT / "README.md").read_text(encoding="utf-8"))
    assert tables, "README.md shows a [tool.bprop-lsp] example"
    for table in tables:
        errors = [e.message for e in validator.iter_errors(table)]
        assert not errors, (table, errors)
        # and the loader takes it without a word
        result = settings_loader.merge(settings_loader.Settings(), table, "README", rules=RULE_NAMES)
        assert not result.warnings and not result.errors


@pytest.mark.parametrize("table", [
    {"mode": "eager"}, {"selct": ["BP001"]}, {"select": ["BP9999"]}, {"ignore": [1]}, {"exclude": "legacy/*"},
    {"select": ["XYZ"]},
])
def test_schema_rejects_what_the_loader_warns_about(table):
    validator = _validator()
    assert list(validator.iter_errors(table)), table
    result = settings_loader.merge(settings_loader.Settings(), table, "t", rules=RULE_NAMES)
    assert result.warnings or result.errors


@pytest.mark.parametrize("table", [
    {"select": ["BP0"]}, {"select": "BP001, BP002"}, {"ignore": ["ALL"]}, {"select": ["bp02"]}, {},
])
def test_schema_accepts_what_the_loader_accepts(table):
    assert not list(_validator().iter_errors(table))
    result = settings_loader.merge(settings_loader.Settings(), table, "t", rules=RULE_NAMES)
    assert not result.warnings and not result.errors


# --- the wheel, installed into a fresh virtualenv -------------------------------------------------------------

def _lsp_message(obj: dict) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read_lsp_messages(data: bytes) -> list[dict]:
    out = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        if not sep:
            break
        length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
        out.append(json.loads(rest[:length]))
        data = rest[length:]
    return out


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory):
    """`python -m build` (sdist, then the wheel built from that sdist), the wheel pip-installed into a new venv."""
    pytest.importorskip("build")
    work = tmp_path_factory.mktemp("packaging")
    dist = work / "dist"
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheels = list(dist.glob("bprop_lsp-*-py3-none-any.whl"))
    sdists = list(dist.glob("bprop_lsp-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(dist.iterdir())
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    py = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    proc = subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheels[0])],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return {"wheel": wheels[0], "sdist": sdists[0], "venv": venv, "python": py,
            "exe": py.parent / "bprop-lsp", "seconds": time.monotonic() - started}


def _clean_env() -> dict:
    # nothing from this checkout or its venv may leak in: the installed package must stand alone
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if ".venv" not in p)
    return env


@pytest.mark.packaging
def test_wheel_contains_the_rule_pages_and_schema(installed_wheel):
    import zipfile

    names = set(zipfile.ZipFile(installed_wheel["wheel"]).namelist())
    assert {f"bprop_lsp/docs/rules/{r.code}.md" for r in ALL_RULES} <= names
    assert {"bprop_lsp/docs/tool-bprop-lsp.schema.json", "bprop_lsp/data/builtin_ops.txt"} <= names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


@pytest.mark.packaging
def test_installed_check_reports_a_finding(installed_wheel, tmp_path):
    seed = tmp_path / "seed.py"
    seed.write_text(SEED)
    proc = subprocess.run([str(installed_wheel["exe"]), "check", str(seed)], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path, env=_clean_env())
    assert proc.returncode == 1, proc.stderr
    assert f"{seed}:8:9: BP001 error" in proc.stdout
    # the docs link points into the installed package, and the page is there
    link = re.search(r"docs: bprop-lsp rule BP001 \((file://\S+)\)", proc.stdout).group(1)
    page = Path(unquote(urlparse(link).path))
    assert str(installed_wheel["venv"]) in str(page) and page.is_file()
    proc = subprocess.run([str(installed_wheel["exe"]), "rule", "BP001"], capture_output=True, text=True,
                          timeout=60, env=_clean_env())
    assert proc.returncode == 0 and proc.stdout == page.read_text(encoding="utf-8")


@pytest.mark.packaging
def test_installed_serve_answers_over_stdio(installed_wheel, tmp_path):
    messages = b"".join([
        _lsp_message({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}}),
        _lsp_message({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        _lsp_message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
        _lsp_message({"jsonrpc": "2.0", "method": "exit"}),
    ])
    proc = subprocess.run([str(installed_wheel["exe"]), "serve"], input=messages, capture_output=True,
                          timeout=60, cwd=tmp_path, env=_clean_env())
    replies = {m.get("id"): m for m in _read_lsp_messages(proc.stdout)}
    assert replies[1]["result"]["serverInfo"]["name"] == "bprop-lsp", proc.stderr[-2000:]
    assert "textDocumentSync" in replies[1]["result"]["capabilities"]
    assert replies[2]["result"] is None
    assert proc.returncode == 0, proc.stderr[-2000:]


SDIST_TREES = ("tests", "docs", "examples", "editors", "scripts")
SDIST_FILES = (".pre-commit-hooks.yaml", ".github/workflows/release.yml", "vscode-client/package.json", "LICENSE",
               "README.md", "pyproject.toml")


@pytest.mark.packaging
def test_sdist_carries_the_test_suite_and_what_it_reads(installed_wheel):
    """An unpacked sdist runs its tests: every conftest.py, fixture, checked doc, example, editor snippet and
    script is in it (MANIFEST.in), not only the tests/test_*.py files setuptools picks by default."""
    import tarfile

    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("needs the git checkout to know which files are tracked")
    tracked = subprocess.run(["git", "ls-files", *SDIST_TREES, *SDIST_FILES], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    with tarfile.open(installed_wheel["sdist"]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    missing = sorted(set(tracked) - names)
    assert not missing, missing
    assert {"tests/conftest.py", "tests/editors/conftest.py", "tests/fixtures/seed_muladd.py"} <= names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


@pytest.mark.packaging
def test_a_local_build_names_no_address_that_does_not_exist(installed_wheel):
    """No public repository exists yet: the wheel built from the checkout has no Project-URL and its long
    description (README.md) links only relative to the repository; the release pins both
    (scripts/pin_release_links.py)."""
    import zipfile

    with zipfile.ZipFile(installed_wheel["wheel"]) as whl:
        meta = next(whl.read(n).decode() for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
    assert "Project-URL:" not in meta
    assert "github.com/bprop-lsp" not in meta


def _pin_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("pin_release_links", ROOT / "scripts/pin_release_links.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_release_pins_every_readme_link_to_a_file_of_the_tag(tmp_path):
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    pin = _pin_module()
    for name in ("README.md", "pyproject.toml"):
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    repo, ref = "https://git.example/o/bprop-lsp", "v9.9.9"
    # links are checked against this checkout (the tag's tree)
    pinned, problems = pin.pin_markdown((ROOT / "README.md").read_text(encoding="utf-8"), repo, ref, ROOT)
    assert not problems, problems
    links = [m.group(3) for m in pin.LINK.finditer(pinned)]
    assert links and all(not pin.is_relative(link) for link in links), [l for l in links if pin.is_relative(l)]
    for link in links:
        if link.startswith(repo):
            kind, _, rel = link[len(repo) + 1:].partition(f"/{ref}/")
            assert kind in ("blob", "raw") and (ROOT / rel.partition("#")[0]).exists(), link
    assert any(link.startswith(f"{repo}/raw/{ref}/") for link in links), "the screenshot is an image link"
    # the script itself, on a copy
    for entry in ROOT.iterdir():
        if entry.name not in ("README.md", "pyproject.toml"):
            (tmp_path / entry.name).symlink_to(entry)
    assert pin.main(["--repo", repo, "--ref", ref, "--root", str(tmp_path)]) == 0
    urls = tomllib.loads((tmp_path / "pyproject.toml").read_text())["project"]["urls"]
    assert urls["Source"] == repo and urls["Issues"] == f"{repo}/issues"
    assert pin.main(["--repo", repo, "--ref", ref, "--root", str(tmp_path)]) == 2  # already pinned


def test_release_pinning_refuses_a_link_to_a_missing_file():
    pin = _pin_module()
    text, problems = pin.pin_markdown("[a](docs/nope.md) [b](#x) [c](https://x.example/y) ![i](docs/rules.md)",
                                      "https://git.example/o/r", "v1", ROOT)
    assert problems == ["README.md: link to docs/nope.md: no docs/nope.md in the checkout"]
    assert "(#x)" in text and "(https://x.example/y)" in text and "(https://git.example/o/r/raw/v1/docs/rules.md)" in text


def test_sarif_names_the_project_home_only_when_the_metadata_has_one(monkeypatch):
    from importlib import metadata

    from bprop_lsp.cli import output

    class Meta:
        def __init__(self, urls):
            self.urls = urls

        def get_all(self, key):
            return self.urls if key == "Project-URL" else None

    monkeypatch.setattr(metadata, "metadata", lambda name: Meta([]))
    assert output._information_uri() == {}
    monkeypatch.setattr(metadata, "metadata", lambda name: Meta(["Issues, https://h.example/o/r/issues",
                                                                 "Source, https://h.example/o/r"]))
    assert output._information_uri() == {"informationUri": "https://h.example/o/r"}


# --- the release workflow -------------------------------------------------------------------------------------

def test_release_workflow_builds_publishes_with_trusted_publishing_and_attaches_the_vsix():
    yaml = pytest.importorskip("yaml")
    wf = yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text())
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads the key `on` as True
    assert on == {"push": {"tags": ["v*"]}}
    jobs = wf["jobs"]
    build_steps = " ".join(str(step.get("run", "")) for step in jobs["build"]["steps"])
    assert "python -m build" in build_steps and "npm run package" in build_steps and "pytest" in build_steps
    publish = jobs["publish-pypi"]
    assert publish["permissions"] == {"id-token": "write"} and publish["environment"]["name"] == "pypi"
    assert any(str(step.get("uses", "")).startswith("pypa/gh-action-pypi-publish") for step in publish["steps"])
    assert not any("password" in (step.get("with") or {}) for step in publish["steps"]), "trusted publishing: no token"
    release = " ".join(str(step.get("run", "")) for step in jobs["github-release"]["steps"])
    assert "gh release create" in release
    steps = [str(step.get("run", "")) for step in jobs["build"]["steps"]]
    pin = next(i for i, run in enumerate(steps) if "scripts/pin_release_links.py" in run)
    assert pin < next(i for i, run in enumerate(steps) if "python -m build" in run), "links pinned before the build"
    assert any(".vsix" in str(step.get("run", "")) for step in jobs["build"]["steps"])


def test_versions_agree():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert json.loads((ROOT / "vscode-client/package.json").read_text())["version"] == version
    import bprop_lsp

    assert bprop_lsp.__version__ == version
