"""D against D' through the documented schema pipeline: one raw row replaced, new index label.

``PublicSchema -> make_encoder() -> DPLogisticRegression`` is fitted ``--releases`` times
(fresh OS noise each time) on a raw frame D (a numeric, a ``category`` and a string column,
a shuffled non-range index as ``train_test_split`` leaves it) and on D', where one row is
replaced by a row with other values and an index label D does not hold. The adversary
sees, for each release, whether a model was published at all, the warnings of the fit
(category and text), the claim, and the released coefficients. Three distinguishers:

* **events**: the outcome (published or the exception's type, and the sorted warnings);
  advantage = total variation distance between its empirical laws on D and D';
* **coefficients**: the projection of ``coef_`` on the difference of the mean releases,
  direction and threshold chosen on the first half of the releases, advantage
  ``TPR - FPR`` measured on the second half;
* the bound: an ``(epsilon, 0)``-DP release allows ``TPR - FPR <= (e^eps - 1) /
  (e^eps + 1)`` for every test.

Run it against another copy of the package (e.g. the code before the positional schema)
with ``PYTHONPATH=<that copy>``; the script prints one table row per distinguisher.

    PYTHONPATH=$PWD python benchmarks/bench_schema_neighbours.py --releases 200
    PYTHONPATH=$PWD python benchmarks/bench_schema_neighbours.py --releases 200 --index range
"""

from __future__ import annotations

import argparse
import math
import warnings

import numpy as np


def _frames(n=300, seed=0, index="shuffled"):
    import pandas as pd

    rng = np.random.default_rng(seed)
    age = rng.uniform(17, 90, n)
    job = rng.choice(["clerk", "nurse", "welder"], n)
    D = pd.DataFrame({"age": age,
                      "job": pd.Series(job, dtype="category"),
                      "city": rng.choice(["north", "south"], n)})
    y = ((age - 50) / 20 + (job == "nurse") + rng.normal(0, 1, n) > 0).astype(int)
    if index == "shuffled":
        D.index = rng.permutation(10 * n)[:n]      # what train_test_split leaves
    D_prime = D.copy()
    D_prime["job"] = D_prime["job"].astype(object)
    D_prime.iloc[0] = [89.0, "welder", "south"]    # the replaced row...
    D_prime.index = [10**9] + list(D.index[1:])    # ...with a label D does not hold
    y_prime = y.copy()
    y_prime[0] = 1 - y[0]
    return D, y, D_prime, y_prime


def _pipeline(epsilon):
    from sklearn.pipeline import make_pipeline

    from sklearn_privacy.linear_model import DPLogisticRegression
    from sklearn_privacy.preprocessing import PublicSchema

    schema = PublicSchema({"age": (17, 90), "job": ["clerk", "nurse", "welder"],
                           "city": ["north", "south"]}, classes=[0, 1])
    # rows [age in [-1, 1], one-hot job, one-hot city, intercept 1]: norm <= sqrt(4)
    model = DPLogisticRegression(epsilon=epsilon, delta=0.0, data_norm=2.0,
                                 intercept_scaling=1.0, classes=[0, 1])
    return make_pipeline(schema, schema.make_encoder(), model)


def _release(X, y, epsilon):
    from sklearn_privacy import privacy_claim

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            pipe = _pipeline(epsilon).fit(X, y)
        except Exception as exc:  # noqa: BLE001 - the failure is an observable
            pipe, outcome = None, f"raised {type(exc).__name__}"
        else:
            outcome = "published"
    seen = tuple(sorted({(w.category.__name__, str(w.message)) for w in caught}))
    if pipe is None:
        return (outcome, seen), None, math.nan
    final = pipe[-1]
    coef = np.r_[np.ravel(final.coef_), np.ravel(final.intercept_)]
    return (outcome, seen), coef, privacy_claim(pipe).epsilon


def _tv(a, b):
    keys = set(a) | set(b)
    return 0.5 * sum(abs(a.count(k) / len(a) - b.count(k) / len(b)) for k in keys)


def _coef_advantage(A, B):
    """Direction and threshold on the first half, TPR - FPR on the second half."""
    if len(A) < 4 or len(B) < 4:
        return math.nan
    A, B = np.asarray(A), np.asarray(B)
    ha, hb = len(A) // 2, len(B) // 2
    u = B[:hb].mean(axis=0) - A[:ha].mean(axis=0)
    sa, sb = A[:ha] @ u, B[:hb] @ u
    cands = np.unique(np.r_[sa, sb])
    best = max(cands, key=lambda t: np.mean(sb >= t) - np.mean(sa >= t))
    return float(np.mean(B[hb:] @ u >= best) - np.mean(A[ha:] @ u >= best))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=200)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--index", choices=["shuffled", "range"], default="shuffled",
                        help="index of D: a train_test_split part, or 0..n-1 as read "
                             "from a file (D' always holds one label D does not)")
    args = parser.parse_args(argv)
    D, y, D_prime, y_prime = _frames(index=args.index)
    out = {"D": ([], [], []), "Dp": ([], [], [])}
    for _ in range(args.releases):
        for key, (X, t) in (("D", (D, y)), ("Dp", (D_prime, y_prime))):
            event, coef, eps = _release(X, t, args.epsilon)
            out[key][0].append(event)
            if coef is not None:
                out[key][1].append(coef)
            out[key][2].append(eps)
    bound = (math.exp(args.epsilon) - 1) / (math.exp(args.epsilon) + 1)
    pub = {k: sum(e[0] == "published" for e in v[0]) for k, v in out.items()}
    claims = {k: sorted({e for e in v[2] if not math.isnan(e)}) for k, v in out.items()}
    print(f"index of D: {args.index}; releases per data set: {args.releases}; "
          f"epsilon = {args.epsilon}; "
          f"allowed TPR - FPR <= {bound:.3f}")
    print(f"published: D {pub['D']}/{args.releases}, D' {pub['Dp']}/{args.releases}; "
          f"claims seen: D {claims['D']}, D' {claims['Dp']}")
    first = {k: v[0][0] for k, v in out.items()}
    print(f"first outcome: D {first['D'][0]} ({len(first['D'][1])} warnings), "
          f"D' {first['Dp'][0]} ({len(first['Dp'][1])} warnings)")
    print(f"| events (published / exception, warnings) | {_tv(out['D'][0], out['Dp'][0]):.3f} |")
    print(f"| coefficients (projection, held-out half) | "
          f"{_coef_advantage(out['D'][1], out['Dp'][1]):.3f} |")


if __name__ == "__main__":
    main()
