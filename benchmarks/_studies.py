"""What the studies share: they run a gallery example's code with the full settings.

``load_example(name)`` imports ``examples/<name>.py`` as a module (the examples guard
their runs, so importing runs nothing); a study then calls its functions with the paper's
grid and writes its figures to ``OUT``. Imported by ``study_*.py`` when run as scripts
(``python benchmarks/study_<name>.py``: this directory is on ``sys.path``).
"""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Where the studies write their figures and tables.
OUT = Path(__file__).resolve().parent / "output"


def load_example(name):
    """The gallery example ``examples/<name>.py`` as a module (its runs are guarded)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
