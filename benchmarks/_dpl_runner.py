"""diffprivlib's side of ``bench_dp_peer.py``, run in its own environment.

diffprivlib 0.6.6 does not import with scikit-learn >= 1.8, so ``bench_dp_peer.py`` runs
this file with the interpreter of a separate environment (diffprivlib 0.6.6,
scikit-learn 1.5.x) and exchanges data through ``.npz`` files:

    python _dpl_runner.py IN.npz OUT.npz

``IN.npz`` holds, for each table ``k``, ``Xtr_k, ytr_k, Xte_k, yte_k`` (already
preprocessed: every row of norm at most 1, targets of the regressions in [-1, 1]) and
``task_k`` ("classification" or "regression"), the declared per-feature bounds
``lo_k, hi_k`` (read by diffprivlib's LinearRegression), plus ``epsilons``, ``n_draws`` and
``seed``. ``OUT.npz`` holds ``score_k`` of shape ``(len(epsilons), n_draws)``: test
accuracy (classification) or R^2 (regression), and the versions used. This file must not
import sklearn_privacy (it runs with another scikit-learn).
"""

import sys
import time
import warnings

import numpy as np


def main(path_in, path_out):
    import diffprivlib
    import sklearn
    from diffprivlib.models import LinearRegression, LogisticRegression
    from sklearn.metrics import r2_score

    data = np.load(path_in, allow_pickle=False)
    epsilons = data["epsilons"]
    n_draws = int(data["n_draws"])
    seed = int(data["seed"])
    n_tables = int(data["n_tables"])
    out = {"diffprivlib_version": np.array(diffprivlib.__version__),
           "sklearn_version": np.array(sklearn.__version__),
           "numpy_version": np.array(np.__version__)}
    for k in range(n_tables):
        Xtr, ytr = data[f"Xtr_{k}"], data[f"ytr_{k}"]
        Xte, yte = data[f"Xte_{k}"], data[f"yte_{k}"]
        task = str(data[f"task_{k}"])
        scores = np.empty((len(epsilons), n_draws))
        t0 = time.perf_counter()
        for i, eps in enumerate(epsilons):
            for j in range(n_draws):
                rs = seed + 1000 * i + j
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if task == "classification":
                        model = LogisticRegression(epsilon=float(eps), data_norm=1.0,
                                                   random_state=rs)
                        model.fit(Xtr, ytr)
                        scores[i, j] = np.mean(model.predict(Xte) == yte)
                    else:
                        lo, hi = data[f"lo_{k}"], data[f"hi_{k}"]
                        model = LinearRegression(epsilon=float(eps), bounds_X=(lo, hi),
                                                 bounds_y=(-1.0, 1.0), random_state=rs)
                        model.fit(Xtr, ytr)
                        pred = model.predict(Xte)
                        scores[i, j] = (r2_score(yte, pred) if np.all(np.isfinite(pred))
                                        else -np.inf)
        out[f"score_{k}"] = scores
        out[f"seconds_{k}"] = np.array(time.perf_counter() - t0)
    np.savez(path_out, **out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
