"""Demo section: WERM trades training-data for reference-data membership privacy."""

from __future__ import annotations

from .._experiments import werm_mnist_study

TITLE = ("WERM, MNIST (1,000 training / 1,000 reference / 1,000 test digits, MLP, "
         "per-class confidence attack)")

#: Kaplan et al. (PETS 2024), Table 2, WERM on Purchase100: setting ->
#: (test accuracy %, MIA accuracy % on training data, on reference data).
PAPER_TABLE_2 = {
    "high reference privacy": (84.2, 68.0, 50.9),
    "equal privacy": (87.0, 61.5, 61.5),
    "public reference data": (83.8, 51.0, 66.7),
}


def compute() -> list[dict]:
    """``werm_mnist_study`` at w = 0, 0.5, 1."""
    return werm_mnist_study()


def render(result: list[dict]) -> str:
    from . import format_table

    rows = [[f"{r['w']:g}", f"{100 * r['test_accuracy']:.1f}", f"{100 * r['mia_train']:.1f}",
             f"{100 * r['mia_reference']:.1f}", f"{r['n_eff']:.0f}",
             f"{r['epsilon_ratio']:.3g}"] for r in result]
    header = ["w", "test acc %", "MIA acc % (training)", "MIA acc % (reference)", "N_eff",
              "eps_T/eps_R"]
    paper = "Paper: Kaplan et al. (PETS 2024), Table 2, WERM on Purchase100 (no MNIST " \
            "experiment there): " + "; ".join(
                f"{k}: test {a:.1f}%, MIA training {t:.1f}%, reference {f:.1f}%"
                for k, (a, t, f) in PAPER_TABLE_2.items()) + "."
    by_w = {r["w"]: r for r in result}
    lo, mid, hi = by_w[0.0], by_w[0.5], by_w[1.0]
    best = max(result, key=lambda r: r["test_accuracy"])
    gap = 100 * abs(mid["mia_train"] - mid["mia_reference"])
    meaning = (
        "What it means: w is the weight of the reference rows. Moving it from 0 to 1 moves "
        f"the leakage from the training rows (MIA {100 * lo['mia_train']:.1f}% -> "
        f"{100 * hi['mia_train']:.1f}%) to the reference rows "
        f"({100 * lo['mia_reference']:.1f}% -> {100 * hi['mia_reference']:.1f}%), as the "
        "paper's three settings do (50% = the attack does no better than guessing). "
        f"w = 0.5 uses all {mid['n_eff']:.0f} rows (largest N_eff), "
        f"{'has the best' if best is mid else 'does not have the best'} test accuracy "
        f"({100 * mid['test_accuracy']:.1f}%), and its two MIA accuracies differ by "
        f"{gap:.1f} points ({'within' if gap <= 4 else 'beyond'} the 4 points under which "
        "the paper calls the privacy of the two sets equal).")
    return "\n".join([format_table(header, rows), paper, meaning])


def check(result: list[dict]) -> list[str]:
    """Claims of the text that the figures do not satisfy (empty when all hold)."""
    by_w = {r["w"]: r for r in result}
    lo, mid, hi = by_w[0.0], by_w[0.5], by_w[1.0]
    claims = {
        "w 0 -> 1 lowers the training rows' MIA accuracy": lo["mia_train"] > hi["mia_train"],
        "w 0 -> 1 raises the reference rows' MIA accuracy": (
            lo["mia_reference"] < hi["mia_reference"]),
        "w = 0.5 has the largest N_eff": mid["n_eff"] > max(lo["n_eff"], hi["n_eff"]),
    }
    return [claim for claim, holds in claims.items() if not holds]


def skipped() -> str | None:
    """Why the section cannot run here (scikit-learn < 1.7), or None."""
    from sklearn.neural_network import MLPClassifier
    from sklearn.utils.validation import has_fit_parameter

    if has_fit_parameter(MLPClassifier(), "sample_weight"):
        return None
    return "Skipped: MLPClassifier takes sample_weight from scikit-learn 1.7 on."


def run() -> str:
    try:
        result = compute()
    except RuntimeError as exc:  # scikit-learn < 1.7: MLPClassifier takes no sample_weight
        return f"Skipped: {exc}"
    return render(result)
