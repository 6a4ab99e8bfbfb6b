"""Citations on the scorer cards: BibTeX built from ``CITATION.cff`` (the five papers) and
``book/scorers/templates/references.yml`` (the metrics' own papers)."""
from __future__ import annotations

import re

from tfc import config

REFERENCES = config.REPO_ROOT / "book" / "scorers" / "templates" / "references.yml"
CITATION_CFF = config.REPO_ROOT / "CITATION.cff"


def references() -> dict[str, dict]:
    """Reference id -> CFF reference: the five papers of CITATION.cff (ids ``true, qags, q2, alignscore,
    wecheck``) and the metrics' own papers of ``templates/references.yml``."""
    import yaml

    prefixes = {"true": "TRUE", "qags": "Asking and Answering", "q2": "Q²", "alignscore": "AlignScore",
                "wecheck": "WeCheck"}
    cff = yaml.safe_load(CITATION_CFF.read_text(encoding="utf-8"))["references"]
    out = {rid: next(r for r in cff if r["title"].startswith(p)) for rid, p in prefixes.items()}
    for r in yaml.safe_load(REFERENCES.read_text(encoding="utf-8")):
        out[r["id"]] = r
    return out


def bibtex(rid: str, ref: dict) -> str:
    """One BibTeX entry from a CFF reference (``conference-paper`` -> inproceedings, ``article``)."""
    first = ref["authors"][0]["family-names"].lower()
    word = re.sub(r"[^a-z]", "", ref["title"].split()[0].lower().rstrip(":")) or rid
    key = f"{re.sub(r'[^a-z]', '', first)}{ref['year']}{word}"
    fields = {"title": ref["title"],
              "author": " and ".join(f"{a['family-names']}, {a['given-names']}" for a in ref["authors"])}
    if ref["type"] == "article":
        fields.update({"journal": ref.get("journal"), "volume": ref.get("volume")})
    else:
        fields["booktitle"] = ref.get("collection-title")
    fields.update({"publisher": (ref.get("publisher") or {}).get("name"), "year": ref["year"],
                   "pages": f"{ref['start']}--{ref['end']}" if "start" in ref else None,
                   "doi": ref.get("doi"), "url": ref.get("url")})
    body = ",\n".join(f"  {k} = {{{' '.join(str(v).split())}}}" for k, v in fields.items() if v is not None)
    kind = "article" if ref["type"] == "article" else "inproceedings"
    return f"@{kind}{{{key},\n{body}\n}}"
