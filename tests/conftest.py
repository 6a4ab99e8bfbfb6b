import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from tfc import config  # noqa: E402


@pytest.fixture(scope="session")
def data_dir():
    d = config.data_dir()
    if not d.is_dir():
        pytest.skip(f"data mirror not found at {d} (set TFC_DATA_DIR)")
    return d


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    """A private score cache directory for one test."""
    monkeypatch.setenv("TFC_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def ledger_dir(tmp_path, monkeypatch):
    """A private reproduction ledger for one test (``TFC_LEDGER_DIR``), with the in-process records cleared."""
    from tfc.book import ledger

    monkeypatch.setenv("TFC_LEDGER_DIR", str(tmp_path / "_ledger"))
    ledger._TABLES.clear()
    ledger._FIGURES.clear()
    yield tmp_path / "_ledger"
    ledger._TABLES.clear()
    ledger._FIGURES.clear()


def assert_field_in_signature(name: str, field: str, other, bad, match: str) -> None:
    """A config field of the as-published preset is in the hash: naming its preset value keeps the signature,
    any other value changes it, and a bad value is refused with ``match`` in the message."""
    from tfc import scorers

    base = scorers.get(name, preset="as-published")
    assert field in base.config.signature_fields()
    same = getattr(base.config, field)
    assert scorers.get(name, preset="as-published", **{field: same}).signature == base.signature
    assert scorers.get(name, preset="as-published", **{field: other}).signature != base.signature
    with pytest.raises(ValueError, match=match):
        scorers.get(name, **{field: bad})
