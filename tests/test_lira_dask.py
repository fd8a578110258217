"""LiRA and RMIA reference fits on a dask.distributed cluster equal the loky results."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from sklearn_privacy.attacks import lira, rmia

joblib = pytest.importorskip("joblib")


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def _data():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 5))
    y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    members = np.zeros(200, bool)
    members[:100] = True
    return X, y, members, LogisticRegression(C=10.0).fit(X[:100], y[:100])


@pytest.mark.parametrize("attack", ["lira", "rmia"])
def test_dask_backend_equals_loky(attack, client):
    X, y, members, target = _data()
    run = {"lira": lambda: lira(target, X, y, members, n_reference_models=6, random_state=0),
           "rmia": lambda: rmia(target, X, y, members, n_reference_models=6,
                                random_state=0)}[attack]
    with joblib.parallel_config(backend="loky", n_jobs=2):
        loky = run()
    from distributed import get_task_stream

    with get_task_stream(client) as tasks, joblib.parallel_config(backend="dask"):
        dask = run()
    assert len(tasks.data) >= 6  # the fits did run on the cluster
    np.testing.assert_array_equal(dask.shadow_in, loky.shadow_in)
    np.testing.assert_array_equal(dask.shadow_statistics, loky.shadow_statistics)
    np.testing.assert_array_equal(dask.scores_members, loky.scores_members)
    np.testing.assert_array_equal(dask.scores_nonmembers, loky.scores_nonmembers)
    assert dask.auc == loky.auc
