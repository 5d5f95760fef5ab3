"""Pin the package's links to the repository a release is built from (the release workflow runs this before
`python -m build`; nothing else should).

The project has no public home yet, so the checked-in files name none: README.md links relative to the
repository (right on the repository's own pages, broken anywhere else), and pyproject.toml has no
[project.urls]. A release is built inside the repository it is published from, and that address exists:

    python scripts/pin_release_links.py --repo https://github.com/OWNER/bprop-lsp --ref v0.2.0

* README.md (the package's long description, shown on PyPI): every relative link becomes
  <repo>/blob/<ref>/<path> and every relative image <repo>/raw/<ref>/<path>; anchors (#...) and absolute links
  stay. A link to a file that is not in the checkout is an error (it would be broken at the tag as well).
* pyproject.toml: gets [project.urls] (Homepage, Source, Issues, Documentation, Changelog), which become the
  wheel's Project-URL fields; SARIF output (`bprop-lsp check --output-format sarif`) names the Source URL as
  its informationUri.

Exit status 0 when both files were rewritten, 2 on a usage error, a missing link target or a pyproject.toml
that already has [project.urls].
"""
from __future__ import annotations

import argparse
import posixpath
import re
import sys
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[1]
# [text](target) and ![alt](target "title"); a link text may hold an image: [![alt](img)](target)
LINK = re.compile(r"(!?)\[((?:[^\[\]]|!\[[^\[\]]*\]\([^)]*\))*)\]\(([^)\s]+)((?:\s+\"[^\"]*\")?)\)")


def is_relative(target: str) -> bool:
    return not re.match(r"^([a-z][a-z0-9+.-]*:|#|//)", target, re.I)


def pin_markdown(text: str, repo: str, ref: str, root: Path, name: str = "README.md") -> tuple[str, list[str]]:
    """The text with its relative links made absolute, and the problems (links to files that do not exist)."""
    repo = repo.rstrip("/").removesuffix(".git")
    problems: list[str] = []

    def pin(target: str, image: bool) -> str:
        if not is_relative(target):
            return target
        path, _, anchor = target.partition("#")
        rel = posixpath.normpath(unquote(path)) if path else name
        if rel.startswith("../") or not (root / rel).exists():
            problems.append(f"{name}: link to {target}: no {rel} in the checkout")
        return f"{repo}/{'raw' if image else 'blob'}/{ref}/{rel}" + (f"#{anchor}" if anchor else "")

    def sub(m: re.Match) -> str:
        bang, inner, target, title = m.groups()
        inner = LINK.sub(sub, inner)  # an image inside a link's text
        return f"{bang}[{inner}]({pin(target, bool(bang))}{title})"

    return LINK.sub(sub, text), problems


def project_urls(repo: str, ref: str) -> str:
    repo = repo.rstrip("/").removesuffix(".git")
    return (
        "\n[project.urls]\n"
        f'Homepage = "{repo}"\n'
        f'Source = "{repo}"\n'
        f'Issues = "{repo}/issues"\n'
        f'Documentation = "{repo}/blob/{ref}/README.md"\n'
        f'Changelog = "{repo}/releases/tag/{ref}"\n'
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True, help="the repository's web address, https://...")
    ap.add_argument("--ref", required=True, help="the tag (or commit) the links name")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout to rewrite (default: this one)")
    args = ap.parse_args(argv)
    if not args.repo.startswith("https://"):
        print(f"pin_release_links: --repo must be an https:// address, not {args.repo!r}", file=sys.stderr)
        return 2
    readme, pyproject = args.root / "README.md", args.root / "pyproject.toml"
    pinned, problems = pin_markdown(readme.read_text(encoding="utf-8"), args.repo, args.ref, args.root)
    toml = pyproject.read_text(encoding="utf-8")
    if re.search(r"^\[project\.urls\]", toml, re.M):
        problems.append("pyproject.toml: already has [project.urls]")
    if problems:
        for p in problems:
            print(f"pin_release_links: {p}", file=sys.stderr)
        return 2
    readme.write_text(pinned, encoding="utf-8")
    pyproject.write_text(toml.rstrip("\n") + "\n" + project_urls(args.repo, args.ref), encoding="utf-8")
    print(f"pin_release_links: README.md links and [project.urls] pinned to {args.repo} at {args.ref}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
