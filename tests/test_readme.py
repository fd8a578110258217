"""The README's Python snippets run as written (warnings about feature names are errors)."""

import re
import warnings
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


@pytest.mark.parametrize("k", range(len(BLOCKS)))
def test_readme_snippet_runs(k, tmp_path, monkeypatch):
    pytest.importorskip("pandas")
    monkeypatch.chdir(tmp_path)          # snippets may write files (report.html)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*feature names.*")
        exec(compile(BLOCKS[k], f"README.md block {k}", "exec"), {})


def test_readme_has_snippets():
    assert len(BLOCKS) >= 2
