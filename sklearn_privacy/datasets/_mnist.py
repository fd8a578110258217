"""The bundled 5,000-digit MNIST subset and the binary 0-vs-1 task of the FIL paper."""

from __future__ import annotations

from functools import lru_cache
from numbers import Integral

import numpy as np
from sklearn.decomposition import PCA
from sklearn.model_selection import train_test_split
from sklearn.utils import Bunch

from ..utils import child_seeds, noise_generator
from ..utils._validation import check_flag
from ..utils.fixes import Interval, validate_params
from ._base import frame_bunch, load_descr, parse_float_table, read_gzip_bytes


@lru_cache(maxsize=1)
def _mnist_table():
    table = parse_float_table(read_gzip_bytes("mnist_5k.csv.gz"), 785)
    return table[:, :784] / 255.0, table[:, 784].astype(np.int64)


@validate_params({"as_frame": ["boolean"]}, prefer_skip_nested_validation=True)
def load_mnist(*, as_frame: bool = False, return_X_y: bool = False) -> Bunch | tuple:
    """Load the bundled MNIST subset: 5,000 digits, 500 per class.

    Parameters
    ----------
    as_frame : bool, default=False
        Return pandas objects (requires pandas).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of the Bunch, as scikit-learn's loaders do.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (5000, 784) pixel intensities scaled to [0, 1], ``target`` digit labels,
        ``feature_names`` (``pixel_0`` ... ``pixel_783``, row-major 28x28), ``images``
        (5000, 28, 28) and ``DESCR``.
    (data, target) : tuple
        With ``return_X_y=True``: the Bunch's ``data`` and ``target``.

    Examples
    --------
    >>> from sklearn_privacy.datasets import load_mnist
    >>> mnist = load_mnist()
    >>> mnist.data.shape, float(mnist.data.max()), len(set(mnist.target))
    ((5000, 784), 1.0, 10)
    """
    as_frame = check_flag(as_frame, "as_frame")
    return_X_y = check_flag(return_X_y, "return_X_y")
    pixels, labels = _mnist_table()
    bunch = Bunch(
        data=pixels.copy(),
        target=labels.copy(),
        feature_names=[f"pixel_{j}" for j in range(784)],
        images=pixels.reshape(-1, 28, 28).copy(),
        DESCR=load_descr("mnist.rst"),
    )
    if as_frame:
        del bunch["images"]
        bunch = frame_bunch(bunch, "load_mnist", "digit")
    return (bunch.data, bunch.target) if return_X_y else bunch


@validate_params(
    {
        "scale_to_unit_ball": ["boolean"],
        "n_components": [Interval(Integral, 1, 784, closed="both"), None],
        "train_size": [Interval(Integral, 2, 998, closed="both")],
        "random_state": ["random_state"],
        "as_frame": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def load_mnist01(
    *,
    scale_to_unit_ball: bool = True,
    n_components: int | None = None,
    train_size: int = 800,
    random_state=None,
    as_frame: bool = False,
) -> Bunch:
    """Load digits 0 and 1 of the bundled MNIST subset, preprocessed as in the FIL paper.

    The 1,000 images are split (stratified by digit) into ``train_size`` training rows and
    the rest for testing. Preprocessing, all fitted on the training rows only:

    1. pixels are scaled to [0, 1];
    2. if ``scale_to_unit_ball``, every row is divided by the largest training-row norm, so
       that ``max_i ||x_i||_2 = 1`` on the training rows (the FIL analysis assumes bounded
       inputs);
    3. if ``n_components`` is given, the rows are projected on the top principal components
       of the (centred) training rows. Projection and centring keep the training rows inside
       a ball of radius 2 (about 0.63 for 20 components here).

    This is the order the FIL paper describes (unit ball, then PCA); with 20 components and
    the default split, ordinary least squares at ``sigma=1`` has example-level eta with mean
    0.47, standard deviation 0.16 and maximum 1.20.

    Parameters
    ----------
    scale_to_unit_ball : bool, default=True
        Apply step 2.
    n_components : int or None, default=None
        Number of principal components kept (the FIL paper uses 20); None keeps the pixels.
    train_size : int, default=800
        Number of training rows.
    random_state : int, RandomState instance or None, default=None
        Seed of the train/test split. ``None``: fresh OS entropy (numpy's global state
        is neither used nor advanced).
    as_frame : bool, default=False
        Return ``data``, ``data_train`` and ``data_test`` as pandas DataFrames and the
        targets as Series (requires pandas); ``frame`` joins ``data`` and ``target``.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data``/``target`` (all 1,000 rows, target 0/1), ``data_train``, ``target_train``,
        ``data_test``, ``target_test``, ``train_index``, ``test_index`` (rows of ``data``),
        ``feature_names`` (``pixel_0`` ... or ``pc_0`` ... after PCA),
        ``images`` (1000, 28, 28 raw pixels in [0, 1], for display), ``pca`` (the fitted
        :class:`~sklearn.decomposition.PCA` or None), ``scale`` (the divisor of step 2) and
        ``DESCR``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.datasets import load_mnist01
    >>> d = load_mnist01(n_components=20, random_state=0)
    >>> d.data_train.shape, d.data_test.shape
    ((800, 20), (200, 20))
    >>> float(np.linalg.norm(load_mnist01(random_state=0).data_train, axis=1).max())
    1.0
    """
    pixels, labels = _mnist_table()
    keep = labels <= 1
    X, y = pixels[keep], labels[keep]
    index = np.arange(len(y))
    if random_state is None:   # fresh OS entropy, never numpy's global state
        random_state = int(child_seeds(noise_generator(None), 1)[0])
    train_index, test_index = train_test_split(
        index, train_size=train_size, stratify=y, random_state=random_state
    )
    train_index, test_index = np.sort(train_index), np.sort(test_index)
    images = X.reshape(-1, 28, 28).copy()
    scale = 1.0
    if scale_to_unit_ball:
        scale = float(np.linalg.norm(X[train_index], axis=1).max())
        X = X / scale
    pca = None
    if n_components is not None:
        pca = PCA(n_components=n_components, svd_solver="full").fit(X[train_index])
        X = pca.transform(X)
    feature_names = (
        [f"pixel_{j}" for j in range(784)] if pca is None
        else [f"pc_{j}" for j in range(n_components)]
    )
    bunch = Bunch(
        data=X,
        target=y,
        feature_names=feature_names,
        data_train=X[train_index],
        target_train=y[train_index],
        data_test=X[test_index],
        target_test=y[test_index],
        train_index=train_index,
        test_index=test_index,
        images=images,
        pca=pca,
        scale=scale,
        DESCR=load_descr("mnist.rst"),
    )
    if as_frame:
        from ._base import require_pandas

        pd = require_pandas("load_mnist01")
        for part, index in (("train", train_index), ("test", test_index)):
            bunch[f"data_{part}"] = pd.DataFrame(X[index], columns=feature_names, index=index)
            bunch[f"target_{part}"] = pd.Series(y[index], name="digit", index=index)
        bunch = frame_bunch(bunch, "load_mnist01", "digit")
    return bunch
