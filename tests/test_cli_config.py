"""Configuration mistakes fail loudly: a rule selector that matches no rule is exit 2 with the nearest codes,
never a run that silently checks nothing."""
from __future__ import annotations

import pytest

from bprop_lsp.checker import RULE_NAMES
from bprop_lsp.cli.main import main
from bprop_lsp.engine import settings as engine_settings

SEED = (
    "from mindspore import nn\n\n\n"
    "class MulAdd(nn.Cell):\n"
    "    def construct(self, x, y):\n"
    "        return 2 * x + y\n\n"
    "    def bprop(self, x, y, out):\n"
    "        return 2 * out, out\n"
)


@pytest.fixture
def seed(tmp_path):
    p = tmp_path / "seed.py"
    p.write_text(SEED)
    return p


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_invalid_selectors_is_a_pure_function_with_suggestions():
    invalid_selectors, selector_message = engine_settings.invalid_selectors, engine_settings.selector_message
    rules = {"BP001": "bprop-missing-params", "BP002": "bprop-extra-params", "BP020": "bprop-returns-non-tuple"}
    assert invalid_selectors(["BP001", "bp0", "BP", "ALL", "all", "BP02"], rules) == []
    assert invalid_selectors(["BP0O1"], rules) == [("BP0O1", ["BP001"])]
    assert invalid_selectors(["bprop-missing-params"], rules) == [("bprop-missing-params", ["BP001"])]
    assert invalid_selectors(["BP999", ""], rules)[1] == ("", [])
    assert invalid_selectors(["BP999"], rules)[0][0] == "BP999"
    assert invalid_selectors(["XYZ"], rules) == [("XYZ", [])]
    assert selector_message("BP0O1", ["BP001"], "--select") == "unknown rule selector `BP0O1` in --select; did you mean BP001?"
    assert selector_message("X", ["BP001", "BP002"], "'ignore'").endswith("did you mean BP001 or BP002?")
    assert "`bprop-lsp rule` lists the rules" in selector_message("XYZ", [], "--select")


def test_invalid_selectors_against_every_built_in_rule():
    invalid_selectors = engine_settings.invalid_selectors
    assert invalid_selectors(["BP001", "BP04", "BP050"], RULE_NAMES) == []
    assert invalid_selectors(["BP0O1"], RULE_NAMES) == [("BP0O1", ["BP001"])]


def test_merge_reports_bad_selectors_as_errors_and_never_selects_nothing():
    Settings, merge = engine_settings.Settings, engine_settings.merge
    result = merge(Settings(), {"select": ["BP0O1"]}, "pyproject.toml", rules=RULE_NAMES)
    assert result.errors == ["pyproject.toml: unknown rule selector `BP0O1` in 'select'; did you mean BP001?"]
    assert result.settings.select is None  # not (): a typo must not turn every rule off
    result = merge(Settings(), {"select": ["BP0O1", "BP02"], "ignore": "BP999"}, "cfg", rules=RULE_NAMES)
    assert result.settings.select == ("BP02",) and len(result.errors) == 2


def test_typo_in_select_flag_exits_2_instead_of_checking_nothing(capsys, seed):
    """Regression: `--select BP0O1` dropped the code with a warning, selected nothing, and exited 0."""
    code, out, err = run(capsys, "check", "--select", "BP0O1", str(seed))
    assert code == 2
    assert "unknown rule selector `BP0O1` in --select; did you mean BP001?" in err
    assert out == ""


def test_unknown_code_in_ignore_flag_exits_2(capsys, seed):
    code, _, err = run(capsys, "check", "--ignore", "BP001,BP999", str(seed))
    assert code == 2 and "unknown rule selector `BP999` in --ignore" in err


def test_typo_in_pyproject_select_exits_2(capsys, seed, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.bprop-lsp]\nselect = ["BP0O1"]\n')
    code, out, err = run(capsys, "check", str(seed))
    assert code == 2
    assert f"{tmp_path / 'pyproject.toml'}: unknown rule selector `BP0O1` in 'select'; did you mean BP001?" in err
    assert "All checks passed" not in out


def test_unknown_key_in_pyproject_warns_with_did_you_mean(capsys, seed, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.bprop-lsp]\nselct = ["BP001"]\n')
    code, _, err = run(capsys, "check", str(seed))
    assert code == 1  # a warning: the defaults apply and the finding is reported
    assert "unknown setting 'selct' (did you mean 'select'?); ignored" in err


def test_rule_name_suggests_its_code(capsys, seed):
    code, _, err = run(capsys, "check", "--select", "bprop-missing-params", str(seed))
    assert code == 2 and "did you mean BP001?" in err
