"""Hessian-vector products of the MLP operator route's solve: one block for all named
rows against one conjugate-gradient run per column.

For each network (synthetic binary data, ``MLPClassifier(hidden, activation="tanh",
alpha, random_state=0)``, default adam fit), the operator route audits the first rows
(``fil.audit(..., hessian="operator", rows=...)``); at its polished minimum the dense
Hessian ``H`` is formed and the right-hand sides ``G_i^T`` of the named rows (``q`` per
row) are solved to a relative residual of 1e-10 twice, with ``H`` as the product:

* ``block``: the library's block conjugate gradients (``fil._mlp._block_cg``);
* ``per column``: plain conjugate gradients, one run per column (vectorised over the
  columns; the route before the block solve).

Reported: the condition number of ``H``, the number of products of each (a column's
product counts once per iteration) and the largest error against ``numpy.linalg.solve``
relative to the largest entry. A second table times one product per direction with the
cached operator (``MLPObjective.hvp_operator``: the forward pass kept, small row blocks)
and with ``MLPObjective.hvp`` (the forward pass recomputed), for 1, 8 and 64 directions.

Run from the repository root: ``PYTHONPATH=. python benchmarks/bench_block_cg.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
from bench_mlp_fil import _data  # the same synthetic task as the MLP audit benchmark
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier
from threadpoolctl import threadpool_limits

from sklearn_privacy import fil
from sklearn_privacy.fil._mlp._audit import _block_cg

CASES = [  # (rows, inputs, hidden, alpha, named rows)
    (5000, 40, (40,), 0.1, 10),
    (2000, 8, (300,), 1.0, 10),
]


def _per_column_cg(H, B, rtol=1e-10):
    """Plain conjugate gradients, every column on its own (vectorised); products."""
    X = np.zeros_like(B)
    R = B.copy()
    P = R.copy()
    rs = np.sum(R * R, axis=0)
    stop = rtol ** 2 * rs
    products = 0
    while True:
        active = rs > stop
        if not active.any():
            return X, products
        HP = H @ P[:, active]
        products += int(active.sum())
        a = rs[active] / np.sum(P[:, active] * HP, axis=0)
        X[:, active] += a * P[:, active]
        R[:, active] -= a * HP
        new = np.sum(R[:, active] ** 2, axis=0)
        P[:, active] = R[:, active] + (new / rs[active]) * P[:, active]
        rs[active] = new


def run(n, d, hidden, alpha, n_rows):
    X, y = _data(n, d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = MLPClassifier(hidden, activation="tanh", alpha=alpha,
                              random_state=0).fit(X, y)
    rows = np.arange(n_rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        audited = fil.audit(model, X, y, sigma=1.0, rows=rows, hessian="operator")
    obj, theta = audited._obj, audited._theta
    H = obj.hessian(theta)
    B = obj.mixed(theta, rows).reshape(-1, obj.p).T
    lam = np.linalg.eigvalsh(H)
    exact = np.linalg.solve(H, B)
    count = [0]

    def hop(V):
        count[0] += V.shape[1]
        return H @ V

    Xb = _block_cg(hop, B, lambda V: V)
    Xc, per_column = _per_column_cg(H, B)
    scale = np.abs(exact).max()
    return (f"| {n:,} x {d}, {hidden}, alpha {alpha} | {obj.p:,} | {lam[-1] / lam[0]:.2g} | "
            f"{B.shape[1]} ({n_rows} rows) | {count[0]:,} | {per_column:,} | "
            f"{np.abs(Xb - exact).max() / scale:.1e} | "
            f"{np.abs(Xc - exact).max() / scale:.1e} |")


def time_products(n, d, hidden, alpha, repeat=5):
    import time

    X, y = _data(n, d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = MLPClassifier(hidden, activation="tanh", alpha=alpha,
                              random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        audited = fil.audit(model, X, y, sigma=1.0, rows=[0], hessian="operator")
    obj, theta = audited._obj, audited._theta
    op = obj.hvp_operator(theta)
    rng = np.random.default_rng(0)
    out = []
    for k in (1, 8, 64):
        V = rng.normal(size=(obj.p, k))
        row = []
        for f in (op, lambda V: obj.hvp(theta, V)):
            best = np.inf
            for _ in range(repeat):
                t = time.process_time()
                f(V)
                best = min(best, time.process_time() - t)
            row.append(1e3 * best / k)
        out.append(f"| {n:,} x {d}, {hidden} | {obj.p:,} | {k} | {row[0]:.2f} | "
                   f"{row[1]:.2f} |")
    return out


def main():
    print("| network | parameters | condition number | right-hand sides | products, block "
          "| products, per column | block error | per-column error |")
    print("|---|---|---|---|---|---|---|---|")
    with threadpool_limits(1):
        for case in CASES:
            print(run(*case), flush=True)
        print("\n| network | parameters | directions | cached operator, ms CPU per "
              "direction | recomputed pass, ms CPU per direction |")
        print("|---|---|---|---|---|")
        for line in time_products(2000, 8, (300,), 1.0):
            print(line, flush=True)


if __name__ == "__main__":
    main()
