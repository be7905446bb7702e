"""The docs site's structure: what the README links to exists and is a page of the site.

`mkdocs build --strict` (CI) checks the links inside the site; these checks
need no mkdocs and run with the default tests.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from envs_registry import ENVS

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
MKDOCS = ROOT / "mkdocs.yml"


def nav_pages() -> set[str]:
    """Return the markdown files mkdocs.yml's nav names (paths relative to docs/)."""
    text = MKDOCS.read_text()
    nav = text[text.index("\nnav:") :]
    return set(re.findall(r"^\s*-\s+(?:[^:\n]+:\s+)?([\w./-]+\.md)\s*$", nav, flags=re.M))


def test_every_page_of_the_docs_folder_is_in_the_nav_and_every_nav_entry_exists():
    pages = {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}
    assert nav_pages() == pages


def test_the_readme_links_only_to_files_that_exist_and_its_docs_links_are_site_pages():
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text())
    local = [link for link in links if "://" not in link]
    assert local, "the README links to the docs"
    for link in local:
        assert (ROOT / link).exists(), link
    docs_links = {link.removeprefix("docs/") for link in local if link.startswith("docs/")}
    assert docs_links <= nav_pages()


@pytest.mark.parametrize("entry", ENVS, ids=lambda entry: entry.id)
def test_every_registered_env_has_a_page_generated_from_its_docstring(entry):
    module, name = entry.entry_point.split(":")
    directive = f"::: {module}.{name}"
    pages = [path for path in (DOCS / "envs").glob("*.md") if directive in path.read_text()]
    assert len(pages) == 1, f"no docs/envs page renders {directive}"
    assert pages[0].read_text().startswith(f"# {entry.id}\n")


def test_no_user_facing_text_talks_about_one_development_machine():
    # the measured reports under docs/results are written by the suites, with their own wording
    texts = [README, *(p for p in DOCS.rglob("*.md") if "results" not in p.parts)]
    for path in texts:
        text = path.read_text()
        for phrase in ("this machine", "../shared", "the issue", "issue's", "Nov 2026"):
            assert phrase not in text, f"{path.relative_to(ROOT)} says {phrase!r}"
