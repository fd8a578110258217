"""WERM utility-privacy study on MNIST (5k) and Adult (WERM paper, Fig. 3, Tables 2 and 3).

Each data set is split at random into equal training, reference and test parts. For every
reference weight ``w`` and seed, a WERM-wrapped ``MLPClassifier`` (which overfits) is
trained on training + reference rows, and the per-class confidence-threshold membership
attack (thresholds chosen on half of the members and non-members, scored on the other
half) is run on training vs test rows and on reference vs test rows. WERM-ES is the same
with training cut short (``max_iter`` epochs).

Outputs (``examples/output/``): ``werm_tradeoff.png`` (Fig. 3: MIA accuracy on training
and reference data and test accuracy against w) and ``werm_results.csv``; printed: the
per-w averages, Table 2 (model selected under the public-reference, equal-privacy and
high-reference-privacy rules) and Table 3 (Pearson correlation between the theoretical
eps_T/eps_R and the empirical ratio of attack advantages over the interior weights).

Run: ``python examples/werm_mnist_adult.py`` (about 30-40 minutes on 2 cores; ``--quick``
runs one seed and five weights in a few minutes).
"""

import argparse
import csv
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402

from sklearn_privacy import WERMClassifier  # noqa: E402
from sklearn_privacy.attacks import membership_inference  # noqa: E402
from sklearn_privacy.datasets import load_adult, load_mnist  # noqa: E402
from sklearn_privacy.demo import format_table  # noqa: E402
from sklearn_privacy.werm import epsilon_ratio  # noqa: E402

OUT = Path(__file__).resolve().parent / "output"
WEIGHTS = (0.0, 0.03, 0.1, 0.3, 0.5, 0.7, 0.9, 0.97, 1.0)
ES_EPOCHS = {"MNIST": 8, "Adult": 3}


def load(name):
    if name == "MNIST":
        d = load_mnist()
        return d.data, d.target
    d = load_adult(subset="all")
    rng = np.random.RandomState(0)
    keep = rng.choice(len(d.target), size=15000, replace=False)  # 5,000 rows per part
    return d.data[keep], d.target[keep]


def mlp(seed):
    return MLPClassifier(hidden_layer_sizes=(128,), max_iter=100, alpha=1e-5,
                         random_state=seed)


def run_one(X, y, w, seed, early_stop=None):
    rng = np.random.RandomState(seed)
    perm = rng.permutation(len(y))
    third = len(y) // 3
    tr, rf, te = perm[:third], perm[third:2 * third], perm[2 * third:3 * third]
    Xfit = np.vstack([X[tr], X[rf]])
    yfit = np.r_[y[tr], y[rf]]
    group = np.r_[np.zeros(tr.size, int), np.ones(rf.size, int)]
    clf = WERMClassifier(mlp(seed), w=w, max_iter=early_stop)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(Xfit, yfit, sample_group=group)
    mia_t = membership_inference(clf, X[tr], y[tr], X[te], y[te], attack="confidence",
                                 thresholds="per_class", random_state=seed)
    mia_r = membership_inference(clf, X[rf], y[rf], X[te], y[te], attack="confidence",
                                 thresholds="per_class", random_state=seed)
    return {"test_acc": clf.score(X[te], y[te]), "mia_train": mia_t.balanced_accuracy,
            "mia_ref": mia_r.balanced_accuracy,
            "eps_ratio": epsilon_ratio(w, tr.size, rf.size)}


def select(rows, rule):
    ok = [r for r in rows if rule(r)]
    return max(ok, key=lambda r: r["test_acc"]) if ok else None


def main(argv=None):
    parser = argparse.ArgumentParser(description="WERM utility-privacy study")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    weights = (0.0, 0.1, 0.5, 0.9, 1.0) if args.quick else WEIGHTS
    seeds = (0,) if args.quick else (0, 1, 2, 3, 4)
    OUT.mkdir(exist_ok=True)
    records = []
    for name in ("MNIST", "Adult"):
        X, y = load(name)
        for variant, es in (("WERM", None), ("WERM-ES", ES_EPOCHS[name])):
            for w in weights:
                for seed in seeds:
                    r = run_one(X, y, w, seed, early_stop=es)
                    records.append({"data": name, "defense": variant, "w": w, "seed": seed, **r})
                    print(f"{name} {variant} w={w} seed={seed}: test {r['test_acc']:.3f} "
                          f"MIA train {r['mia_train']:.3f} ref {r['mia_ref']:.3f}", flush=True)
    with open(OUT / "werm_results.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)

    def mean_rows(data, defense):
        out = []
        for w in weights:
            rs = [r for r in records if r["data"] == data and r["defense"] == defense
                  and r["w"] == w]
            out.append({"w": w, **{k: float(np.mean([r[k] for r in rs]))
                                   for k in ("test_acc", "mia_train", "mia_ref", "eps_ratio")}})
        return out

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, data in zip(axes, ("MNIST", "Adult"), strict=True):
        rows = mean_rows(data, "WERM")
        ws = [r["w"] for r in rows]
        ax.plot(ws, [100 * r["mia_train"] for r in rows], "o-", label="MIA acc., training")
        ax.plot(ws, [100 * r["mia_ref"] for r in rows], "s-", label="MIA acc., reference")
        ax.plot(ws, [100 * r["test_acc"] for r in rows], "^-", label="test accuracy")
        ax.set_xlabel("reference weight w")
        ax.set_ylabel("%")
        ax.set_title(f"{data}: WERM, MLP, {len(seeds)} seed(s)")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT / "werm_tradeoff.png", dpi=120)

    for data in ("MNIST", "Adult"):
        for defense in ("WERM", "WERM-ES"):
            rows = mean_rows(data, defense)
            print(f"\n{data}, {defense} (mean over {len(seeds)} seed(s))")
            print(format_table(["w", "test acc %", "MIA train %", "MIA ref %", "eps_T/eps_R"],
                               [[f"{r['w']:g}", f"{100 * r['test_acc']:.1f}",
                                 f"{100 * r['mia_train']:.1f}", f"{100 * r['mia_ref']:.1f}",
                                 f"{r['eps_ratio']:.3g}"] for r in rows]))
    table2 = []
    rules = {
        "public reference (MIA train <= 51%)": lambda r: r["mia_train"] <= 0.51,
        "equal privacy (|MIA train - MIA ref| <= 4%)":
            lambda r: abs(r["mia_train"] - r["mia_ref"]) <= 0.04,
        "high reference privacy (MIA ref <= 51%)": lambda r: r["mia_ref"] <= 0.51,
    }
    for data in ("MNIST", "Adult"):
        for defense in ("WERM", "WERM-ES"):
            rows = mean_rows(data, defense)
            for setting, rule in rules.items():
                r = select(rows, rule)
                table2.append([data, defense, setting] + (
                    ["-"] * 4 if r is None else
                    [f"{r['w']:g}", f"{100 * r['test_acc']:.1f}", f"{100 * r['mia_train']:.1f}",
                     f"{100 * r['mia_ref']:.1f}"]))
    print("\nTable 2: selected model per privacy setting")
    print(format_table(["data", "defense", "setting", "w", "test acc %", "MIA train %",
                        "MIA ref %"], table2))
    table3 = []
    for data in ("MNIST", "Adult"):
        rows = [r for r in mean_rows(data, "WERM") if 0 < r["w"] < 1]
        theory = np.array([r["eps_ratio"] for r in rows])
        adv_ratio = np.array([(r["mia_train"] - 0.5) / max(r["mia_ref"] - 0.5, 1e-3)
                              for r in rows])
        corr = np.corrcoef(theory, adv_ratio)[0, 1] if len(rows) > 2 else float("nan")
        table3.append([data, str(len(rows)), f"{corr:.2f}"])
    print("\nTable 3: Pearson correlation, eps_T/eps_R vs (MIA train - 0.5)/(MIA ref - 0.5)")
    print(format_table(["data", "interior weights", "Pearson r"], table3))
    print(f"\noutputs written to {OUT}")


if __name__ == "__main__":
    main()
