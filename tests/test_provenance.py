"""tfc.book.provenance: the chapter footer (versions, device, manifest hash, commit, score reads)."""
import hashlib

import pandas as pd
import pytest

from tfc.book import provenance
from tfc.cache import ScoreCache


@pytest.fixture(autouse=True)
def _fresh_reads():
    provenance.clear_reads()
    yield
    provenance.clear_reads()


def test_manifest_hash_is_sha256_of_the_file(tmp_path):
    p = tmp_path / "MANIFEST"
    p.write_bytes(b"abc")
    assert provenance.manifest_sha256(p) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert provenance.manifest_sha256(tmp_path / "missing") is None
    # the repository's own manifest is hashed by default
    real = provenance.config.REPO_ROOT / "data" / "MANIFEST"
    assert provenance.manifest_sha256() == hashlib.sha256(real.read_bytes()).hexdigest()


def test_git_commit_outside_a_clone_is_none(tmp_path):
    assert provenance.git_commit(tmp_path) is None
    sha = provenance.git_commit()
    assert sha is None or len(sha.split("+")[0]) == 40


def test_cache_reads_are_recorded_once_per_entry(tmp_cache):
    c = ScoreCache("sigA.123", "frank", "valid")
    c.write_part(pd.DataFrame({"id": ["frank/valid/1", "frank/valid/2"], "score": [0.1, 0.2],
                               "input_sha": ["a", "b"]}))
    assert provenance.reads().empty
    c.read()
    c.read()
    c.write_part(pd.DataFrame({"id": ["frank/valid/3"], "score": [0.3], "input_sha": ["c"]}))
    c.read()
    r = provenance.reads()
    assert r.to_dict("records") == [{"kind": "cache", "signature": "sigA.123", "dataset": "frank",
                                     "split": "valid", "rows": 3}]


def test_empty_cache_read_is_not_recorded(tmp_cache):
    ScoreCache("sigB.1", "frank", "valid").read()
    assert provenance.reads().empty


def test_footer_lists_reads_and_given_signatures():
    provenance.record_read("imported", "imported:x/y", "mnbm", None, 10)
    f = provenance.footer(signatures="rougeL.abc", device="cuda")
    assert f.env["device"] == "cuda"
    assert f.signatures() == ["imported:x/y", "rougeL.abc"]
    assert f.reads.loc[0, "rows"] == 10 and f.reads.loc[1, "kind"] == "given"
    html = f._repr_html_()
    for s in ("data_manifest_sha256", "imported:x/y", "rougeL.abc", "pandas", "transformers"):
        assert s in html
    assert "imported:x/y" in repr(f)
    assert set(provenance.PACKAGES) <= set(f.env["packages"])
    assert f.env["packages"]["pandas"] == pd.__version__


def test_footer_without_reads_says_so():
    assert "No score cache" in provenance.footer()._repr_html_()


@pytest.mark.parametrize("bad", [[""], [None], [3]])
def test_footer_rejects_bad_signatures(bad):
    with pytest.raises(TypeError):
        provenance.footer(signatures=bad)


def test_device_without_torch_import(monkeypatch):
    monkeypatch.delenv("TFC_DEVICE", raising=False)
    monkeypatch.setitem(provenance.sys.modules, "torch", None)
    assert provenance.device_info() == "cpu (torch not used by this chapter)"
    monkeypatch.setenv("TFC_DEVICE", "mps")
    assert provenance.device_info() == "mps"
    assert provenance.device_info("cuda:1") == "cuda:1"
