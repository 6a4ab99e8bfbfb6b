"""The skeleton: light import, configuration, CLI, pinned environment, reference joins."""
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import tfc
from tfc import config
from tfc.book import reference
from tfc.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_import_is_light():
    code = ("import sys, time; t=time.perf_counter(); import tfc, tfc.config, tfc.cli; "
            "dt=time.perf_counter()-t; heavy=[m for m in ('torch','transformers','spacy','tensorflow') "
            "if m in sys.modules]; print(heavy); print(dt)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "[]", f"import tfc pulled in heavy modules: {out[0]}"


def test_lazy_submodules():
    assert tfc.book.reference is reference
    with pytest.raises(AttributeError):
        tfc.no_such_thing  # noqa: B018


def test_paths_follow_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TFC_DATA_DIR", str(tmp_path / "mirror"))
    monkeypatch.setenv("TFC_ARTIFACTS_DIR", str(tmp_path / "art"))
    monkeypatch.setenv("TFC_CACHE_DIR", str(tmp_path / "cache"))
    assert config.data_dir() == tmp_path / "mirror"
    assert config.artifacts_dir() == tmp_path / "art"
    assert config.cache_dir() == tmp_path / "cache"


def test_paths_defaults(monkeypatch):
    for v in ("TFC_DATA_DIR", "TFC_ARTIFACTS_DIR", "TFC_CACHE_DIR"):
        monkeypatch.delenv(v, raising=False)
    shared = ROOT.parent / "shared" / "data"
    assert config.data_dir() == (shared if shared.is_dir() else ROOT / "data" / "raw")
    assert config.artifacts_dir() == ROOT / "artifacts"
    assert config.cache_dir() == ROOT / "results" / "scores"


def test_cli_env_reports_paths_and_flags(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    res = CliRunner().invoke(main, ["env", "--json"])
    assert res.exit_code == 0, res.output
    assert '"HF_HUB_OFFLINE": "1"' in res.output
    assert str(config.data_dir()) in res.output


def test_cli_unknown_command_is_clear():
    res = CliRunner().invoke(main, ["no-such-command"])
    assert res.exit_code != 0


def _fake_clone(root: Path, name: str = "tfc") -> Path:
    (root / "tfc").mkdir(parents=True)
    (root / "tfc" / "__init__.py").write_text("")
    (root / "pyproject.toml").write_text(f'[project]\nname = "{name}"\nversion = "0"\n')
    return root


def test_enclosing_clone_finds_the_project_folder_above(tmp_path):
    clone = _fake_clone(tmp_path / "a")
    (clone / "book" / "deep").mkdir(parents=True)
    assert config.enclosing_clone(clone / "book" / "deep") == clone.resolve()
    assert config.enclosing_clone(_fake_clone(tmp_path / "other", name="tfc-fork")) is None   # not this project
    assert config.enclosing_clone(tmp_path) is None
    assert config.enclosing_clone(ROOT / "tests") == config.REPO_ROOT.resolve()
    assert config.foreign_clone(ROOT) is None and config.foreign_clone(clone) == clone.resolve()


def test_foreign_clone_with_a_deleted_working_directory_is_none(monkeypatch):
    def gone():
        raise FileNotFoundError("the working directory was removed")

    monkeypatch.setattr(config.Path, "cwd", staticmethod(gone))
    assert config.foreign_clone() is None


def test_cli_in_another_clone_warns_and_book_refuses(monkeypatch, tmp_path):
    """A venv shared between clones runs the clone set up last: in another clone, `tfc book` (which executes
    and writes the installed clone's notebooks) stops with the fix, other commands warn and go on."""
    clone = _fake_clone(tmp_path / "second")
    monkeypatch.chdir(clone)
    res = CliRunner().invoke(main, ["book", "--help"])
    assert res.exit_code == 1 and str(clone.resolve()) in res.output and "setup_env.sh" in res.output
    res = CliRunner().invoke(main, ["env", "--json"])
    assert res.exit_code == 0 and "tfc: warning:" in res.stderr and str(config.REPO_ROOT) in res.stderr
    monkeypatch.chdir(tmp_path)                 # outside any clone: nothing to say
    res = CliRunner().invoke(main, ["env", "--json"])
    assert res.exit_code == 0 and "warning" not in res.stderr


def _pins(lines):
    pins = {}
    for line in lines:
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            name, _, ver = line.partition("==")
            pins[re.sub(r"[-_.]+", "-", name.lower())] = ver
    return pins


def test_requirements_are_pinned_and_constrained():
    req = _pins((ROOT / "requirements.txt").read_text().splitlines())
    assert req, "requirements.txt is empty"
    assert all(v for v in req.values()), "every top-level requirement is pinned with =="
    assert req["torch"] == "2.13.0" and req["jupyter-book"] == "1.0.4.post1"
    cons = _pins((ROOT / "constraints.txt").read_text().splitlines())
    for name, ver in req.items():
        assert cons.get(name) == ver, f"constraints.txt disagrees with requirements.txt on {name}"


def test_environment_yml_points_at_the_pinned_files():
    text = (ROOT / "environment.yml").read_text()
    for needed in ("-r requirements.txt", "-c constraints.txt", "requirements-nodeps.txt", "-e ."):
        assert needed in text, f"environment.yml lost '{needed}'"
    py = re.search(r"python=(\d+\.\d+)", text).group(1)
    assert py == f"{sys.version_info.major}.{sys.version_info.minor}" or py == "3.11"


def test_reference_paper_vs_ours_hand_case():
    ours = pd.DataFrame({"row": ["frank", "summeval", "nowhere"], "column": ["n_examples"] * 3,
                         "value": [670, 1600, 3]})
    out = reference.paper_vs_ours(ours, "TRUE-T2")
    got = out.set_index("row")
    assert got.loc["frank", "paper"] == 671 and got.loc["frank", "delta"] == -1
    assert got.loc["summeval", "delta"] == 0
    assert pd.isna(got.loc["nowhere", "paper"])
    with pytest.raises(KeyError):
        reference.load("TRUE-T99")
    with pytest.raises(ValueError):
        reference.paper_vs_ours(pd.DataFrame({"row": ["x"]}), "TRUE-T2")


def test_reference_scale_and_summary():
    ours = pd.DataFrame({"row": ["frank"], "column": ["summac_zs"], "value": [0.885]})
    out = reference.paper_vs_ours(ours, "TRUE-T3", scale=100)
    assert out.loc[0, "paper"] == 89.1 and out.loc[0, "ours"] == 88.5
    assert abs(out.loc[0, "delta"] - (-0.6)) < 1e-9
    s = reference.compare_summary(out)
    assert s["n_cells"] == 1 and abs(s["max_abs_delta"] - 0.6) < 1e-9


def test_tests_import_this_clone():
    """The venv is shared between clones (scripts/setup_env.sh); the code under test must be this one."""
    assert Path(tfc.__file__).resolve().parent.parent == ROOT
    code = "import tfc, pathlib; print(pathlib.Path(tfc.__file__).resolve().parent.parent)"
    import os
    env = dict(os.environ)
    if "PYTHONPATH" in env or os.environ.get("CI"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             cwd="/", env=env).stdout.strip()
        assert out == str(ROOT), f"a subprocess (notebook kernel, CLI) would import tfc from {out}"


def test_venv_has_the_console_script_and_it_imports_this_clone():
    """The cold-install check: the venv that runs the tests has the `tfc` console script, and
    the venv's own install (PYTHONPATH cleared, run from outside the clone) imports this clone."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import tfc

    clone = Path(tfc.__file__).resolve().parent.parent
    script = Path(sys.executable).parent / "tfc"
    assert script.is_file() and os.access(script, os.X_OK), f"no tfc console script beside {sys.executable}"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", "import tfc; print(tfc.__file__)"], cwd="/", env=env,
                         capture_output=True, text=True, check=True).stdout.strip()
    assert Path(out).resolve().is_relative_to(clone), (out, clone)
    ver = subprocess.run([str(script), "--help"], cwd="/", env=env, capture_output=True, text=True)
    assert ver.returncode == 0 and "Usage" in ver.stdout
    assert shutil.which("tfc", path=str(script.parent)) == str(script)
