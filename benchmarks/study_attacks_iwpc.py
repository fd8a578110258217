"""
Study: attribute inversion against FIL noise, IRFIL, and privacy-constrained model selection

The code of the gallery example ``examples/attacks_iwpc.py`` (its docstring describes the
attacks) on the paper's full grid: Figure 6 over 11 noise scales for lambda in {1e-3,
1e-2, 1e-1} with 100 simulated releases per white-box accuracy and 10 released models for
Fredrikson; Figure 7 on IWPC and Adult (``married``, logistic IRFIL); the grid search over
nine noise scales. ``--quick`` runs the example's settings.

Figures: ``benchmarks/output/attacks_iwpc_fig6.png``, ``benchmarks/output/attacks_irfil_fig7.png``.
Run: ``python benchmarks/study_attacks_iwpc.py [--quick]`` (a few minutes).
"""

import argparse

import numpy as np
from _studies import OUT, load_example


def main(argv=None):
    parser = argparse.ArgumentParser(description="attribute-inversion study on IWPC")
    parser.add_argument("--quick", action="store_true", help="the gallery example's settings")
    args = parser.parse_args(argv)
    example = load_example("attacks_iwpc")
    example.OUT = OUT
    OUT.mkdir(parents=True, exist_ok=True)
    quick = args.quick
    example.figure6(np.logspace(-5, 0, 6 if quick else 11),
                    lambdas=(1e-2,) if quick else (1e-3, 1e-2, 1e-1),
                    n_draws=20 if quick else 100, n_draws_blackbox=3 if quick else 10)
    example.figure7(adult=not quick)
    example.grid_search(np.logspace(-4, 0, 5 if quick else 9))


if __name__ == "__main__":
    main()
