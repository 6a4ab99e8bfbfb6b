"""CITATION.cff: valid YAML in CFF 1.2.0 with the five papers as references."""
from __future__ import annotations

from pathlib import Path

import yaml

CFF = Path(__file__).resolve().parent.parent / "CITATION.cff"


def test_citation_cff_lists_the_five_papers():
    c = yaml.safe_load(CFF.read_text(encoding="utf-8"))
    assert c["cff-version"] == "1.2.0" and c["type"] == "software"
    assert {"message", "title", "authors", "version", "license"} <= set(c)
    refs = c["references"]
    titles = " | ".join(r["title"] for r in refs)
    for key in ("TRUE", "Asking and Answering Questions", "Q²", "AlignScore", "WeCheck"):
        assert key in titles, key
    assert len(refs) == 5
    for r in refs:
        assert r["type"] == "conference-paper" and r["authors"] and isinstance(r["year"], int)
        assert r["doi"].startswith("10.18653/v1/") and r["url"].startswith("https://aclanthology.org/")
