"""The Python and R packages describe one project: version and addresses agree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import nordicstats

tomllib = pytest.importorskip("tomllib", reason="Python >= 3.11 reads pyproject.toml")

ROOT = Path(__file__).resolve().parents[1]


def description():
    """DESCRIPTION's fields (continuation lines joined)."""
    text = (ROOT / "DESCRIPTION").read_text(encoding="utf-8")
    return {m.group(1): " ".join(m.group(2).split())
            for m in re.finditer(r"^([\w@/.]+):\s*(.*(?:\n[ \t].*)*)", text, re.MULTILINE)}


def test_description_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    desc = description()
    assert desc["Version"] == project["version"] == nordicstats.__version__
    assert desc["URL"] == project["urls"]["Homepage"] == project["urls"]["Source"]
    assert desc["BugReports"] == project["urls"]["Issues"]
    assert desc["BugReports"].startswith(desc["URL"])
    assert desc["VignetteBuilder"] == "knitr"
