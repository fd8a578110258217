"""The README's main demo: every section runs on the bundled data and prints its table."""

import re

from sklearn_privacy import demo


def test_every_demo_section_runs_and_prints_its_table(capsys):
    demo.main([])
    out = capsys.readouterr().out
    modules = demo.section_modules()
    assert len(modules) >= 5
    for module in modules:
        assert f"=== {module.TITLE} ===" in out
    # one timing line per section, then the total
    assert len(re.findall(r"^\(\d+\.\d s\)$", out, flags=re.M)) == len(modules)
    assert "Demo finished in" in out
    # headline figures of the papers, as the demo prints them
    assert re.search(r"^linear\s+0\s+0\.5\d\d \+- ", out, flags=re.M)  # FIL: digit-0 eta
    assert re.search(r"^  \+ IRFIL\s+0\.509 \+- 0\.000\s+0\.509", out, flags=re.M)


def test_only_filters_sections(capsys):
    demo.main(["--only", "irfil"])
    out = capsys.readouterr().out
    assert out.count("=== ") == 1 and "Iteratively reweighted FIL" in out
