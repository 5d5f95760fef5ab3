"""The engine, imported only once a file needs it.

Importing ``bprop_lsp.engine`` loads parso, the rules and the analysis (0.1-0.2 s, more than reading a
thousand files), and most files of a repository never need it: without ``bprop`` in them there is nothing to
check. The CLI's parent process needs only the settings model (``engine/settings.py``, standard library only),
but importing it the ordinary way runs ``engine/__init__.py``, which imports everything. So it is loaded here
as ``bprop_lsp.engine.settings`` on its own; when the engine package is imported later, its ``from .settings
import ...`` finds that module in ``sys.modules`` and uses it (one ``Settings`` class either way).

(A lazy ``engine/__init__.py``, PEP 562 ``__getattr__``, would make this unnecessary.)
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

_PACKAGE = "bprop_lsp.engine"
_SETTINGS = _PACKAGE + ".settings"


def settings_module():
    """``bprop_lsp.engine.settings``, without importing the rest of the engine when it is not imported yet."""
    module = sys.modules.get(_SETTINGS)
    if module is not None:
        return module
    path = Path(__file__).resolve().parent.parent / "engine" / "settings.py"
    if _PACKAGE in sys.modules or not path.is_file():
        return importlib.import_module(_SETTINGS)
    spec = importlib.util.spec_from_file_location(_SETTINGS, path)
    if spec is None or spec.loader is None:  # pragma: no cover - an unusual installation
        return importlib.import_module(_SETTINGS)
    module = importlib.util.module_from_spec(spec)
    sys.modules[_SETTINGS] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(_SETTINGS, None)
        raise
    return module


def engine():
    """The ``bprop_lsp.engine`` package (imported on first use)."""
    package = sys.modules.get(_PACKAGE)
    if package is None:
        package = importlib.import_module(_PACKAGE)
    if "settings" not in vars(package):
        # Loaded on its own above: make it the package's attribute too, as an ordinary import would have.
        package.settings = sys.modules[_SETTINGS]
    return package


def engine_loaded() -> bool:
    return _PACKAGE in sys.modules
