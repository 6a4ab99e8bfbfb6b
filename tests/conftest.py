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
