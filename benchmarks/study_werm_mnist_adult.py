"""
Study: WERM utility-privacy study on MNIST (5k) and Adult (WERM paper, Fig. 3, Tables 2 and 3)

The paper's full grid run with the code of the gallery example
``examples/werm_mnist_adult.py`` (its docstring describes the protocol): 5 seeds x 9
weights x 2 defenses (WERM, WERM-ES) x 2 data sets = 180 fits, about 15 minutes on 2
shared cores with ``--n-jobs 2``; ``--quick`` runs one seed and five weights, and
``--n-per-part`` and ``--epochs`` shrink the study further (the test suite runs a tiny
version).

Outputs (``benchmarks/output/``): ``werm_tradeoff.png`` (Fig. 3) and ``werm_results.csv``;
printed: the per-w averages, Table 2 and Table 3.

Run: ``python benchmarks/study_werm_mnist_adult.py [--quick]``.
"""

import argparse
from pathlib import Path

from _studies import OUT, load_example


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="WERM utility-privacy study")
    parser.add_argument("--quick", action="store_true",
                        help="one seed, weights 0, 0.1, 0.5, 0.9, 1")
    parser.add_argument("--n-per-part", type=int, default=5000,
                        help="rows per part (MNIST has 5,000 rows: 1,666 per part)")
    parser.add_argument("--epochs", type=int, default=None,
                        help="WERM training epochs (default: the example's EPOCHS)")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--no-es", action="store_true", help="skip WERM-ES")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--datasets", nargs="+", default=["MNIST", "Adult"],
                        choices=["MNIST", "Adult"])
    parser.add_argument("--verbose", type=int, default=1,
                        help="0: silent, 1: one line per fit (default)")
    return parser.parse_args(argv)


def main(argv=None):
    """Run the study with the command-line arguments ``argv`` (default: ``sys.argv``)."""
    args = parse_args(argv)
    example = load_example("werm_mnist_adult")
    return example.study(
        tuple(args.datasets),
        (0.0, 0.1, 0.5, 0.9, 1.0) if args.quick else example.WEIGHTS,
        (0,) if args.quick else (0, 1, 2, 3, 4),
        ("WERM",) if args.no_es else ("WERM", "WERM-ES"),
        n_per_part=args.n_per_part,
        epochs=example.EPOCHS if args.epochs is None else args.epochs,
        n_jobs=args.n_jobs, out=args.out, verbose=args.verbose)


if __name__ == "__main__":  # not when a test imports the module
    results = main()
