"""The examples rendered in the gallery: the WERM study's progress output."""

import importlib.util
from pathlib import Path

import pytest
from sklearn.neural_network import MLPClassifier
from sklearn.utils.validation import has_fit_parameter

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _example(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not has_fit_parameter(MLPClassifier(), "sample_weight"),
                    reason="MLPClassifier.fit takes sample_weight from scikit-learn 1.7 on")
def test_werm_study_verbose_prints_one_line_per_fit(capsys):
    study = _example("werm_mnist_adult")
    kwargs = dict(weights=(0.0, 1.0), seeds=(0,), defenses=("WERM",), n_per_part=30,
                  epochs=2, n_jobs=1)
    silent = study.run_study(("MNIST",), **kwargs)
    assert capsys.readouterr().out == ""
    loud = study.run_study(("MNIST",), verbose=1, **kwargs)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(loud) == 2
    assert lines[0].startswith("[1/2] MNIST WERM w=0.0 seed=0: test ")
    assert lines[-1].startswith("[2/2] MNIST WERM w=1.0 seed=0: test ")
    # verbosity changes the output only, not the results
    assert [r["test_acc"] for r in silent] == [r["test_acc"] for r in loud]
    with pytest.raises(ValueError, match="datasets"):
        study.run_study(("CIFAR",), **kwargs)


def test_every_example_is_in_gallery_format():
    for path in sorted(EXAMPLES.glob("*.py")):
        text = path.read_text()
        lines = text.splitlines()
        assert lines[0] == '"""', path.name
        assert set(lines[2]) == {"="} and len(lines[2]) == len(lines[1]), path.name
        assert "\n# %%\n" in text, path.name
        # examples, not command-line programs: the long studies live in benchmarks/
        assert "argparse" not in text and "sys.argv" not in text, path.name
