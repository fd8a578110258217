"""
Study: multicalibration on Adult: the paper's Figure 2 on two bases, reliability, epsilon sweep

The code of the gallery example ``examples/multicalibration_adult.py`` (its docstring
describes the setup) with the full settings: medians over 20 noise draws per private
configuration and seven epsilons (``--quick``: three draws, three epsilons).

Figures (``benchmarks/output/``): ``multicalibration_fig2.png``,
``multicalibration_reliability.png``, ``multicalibration_epsilon.png``.

Run: ``python benchmarks/study_multicalibration_adult.py [--quick]`` (a few minutes).
"""

import argparse

from _studies import OUT, load_example


def main(argv=None):
    parser = argparse.ArgumentParser(description="multicalibration study on Adult")
    parser.add_argument("--quick", action="store_true", help="fewer seeds and epsilons")
    args = parser.parse_args(argv)
    example = load_example("multicalibration_adult")
    example.OUT = OUT
    OUT.mkdir(parents=True, exist_ok=True)
    seeds = range(3) if args.quick else range(20)
    epsilons = [0.1, 1.0, 10.0] if args.quick else [0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0]
    data = example.adult_setup()
    example.figure2(data, seeds)
    example.reliability(data)
    example.epsilon_sweep(data, seeds, epsilons)


if __name__ == "__main__":
    main()
