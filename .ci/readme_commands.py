"""The shell commands of README.md's "The two commands" section, one per line.

``python3 .ci/readme_commands.py`` prints every line of the section's ``bash`` blocks that
starts with ``python3 -m venv`` (the demo, the test suite, the minimum-versions suite,
lint and the documentation);
``--venv CMD`` prints the virtual environment directory that CMD creates. ``.ci/run`` runs
exactly these lines, and ``tests/test_packaging.py`` checks that it does.
"""

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
SECTION = "## The two commands"


def commands(text: str) -> list[str]:
    """Lines starting with ``python3 -m venv`` in the ``bash`` blocks of the section."""
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    section = text[start:end if end != -1 else None]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    return [line.strip() for block in blocks for line in block.splitlines()
            if line.strip().startswith("python3 -m venv ")]


def venv_dir(command: str) -> str:
    """The directory of ``python3 -m venv DIR`` at the start of ``command``."""
    match = re.match(r"python3 -m venv (\S+) ", command)
    if match is None or match.group(1).startswith(("/", "..")) or match.group(1) in {".", "./"}:
        raise ValueError(f"not a command creating a venv inside the checkout: {command!r}")
    return match.group(1)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--venv"]:
        print(venv_dir(sys.argv[2]))
    else:
        print("\n".join(commands(README.read_text(encoding="utf-8"))))
