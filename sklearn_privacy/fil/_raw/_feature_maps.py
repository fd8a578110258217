"""Derivatives of fitted feature maps: the chain rule from a pipeline's raw inputs.

A model released after a fitted preprocessing ``phi`` (the steps of a
:class:`~sklearn.pipeline.Pipeline` before its final estimator) acts on ``phi(x)``. Its
sensitivity to a raw input row ``x`` is the sensitivity to the features times the
Jacobian ``d phi / d x`` of the map at ``x``. This module traces a fitted transformer
chain and returns that Jacobian, row by row, for the maps whose derivative is known in
closed form; everything else is *refused by name* (never skipped).

Raw coordinates
---------------
The derivative is taken with respect to the **raw coordinates** of a row:

- a numeric input column is one coordinate (its value, in the units of the raw frame);
- a categorical input column encoded by a :class:`~sklearn.preprocessing.OneHotEncoder`
  (or an :class:`~sklearn.preprocessing.OrdinalEncoder`) directly on the raw column --
  alone, or after a :class:`~sklearn.impute.SimpleImputer` -- is represented by its
  encoded columns (one coordinate per one-hot level), as the encoded attribute always was
  in this package; the derivative of the map with respect to them is the identity (then
  whatever the later steps do to them).

Supported steps and their derivatives
-------------------------------------
- nested :class:`~sklearn.pipeline.Pipeline` (chain rule) and
  :class:`~sklearn.compose.ColumnTransformer` (block structure, remainder included);
- :class:`~sklearn.preprocessing.StandardScaler`, ``MinMaxScaler`` (zero derivative where
  ``clip`` clips), ``MaxAbsScaler``, ``RobustScaler``, the package's
  :class:`~sklearn_privacy.preprocessing.DPStandardScaler` and
  :class:`~sklearn_privacy.preprocessing.BoundedScaler` (zero derivative outside the
  bounds, where the value is clipped), ``SimpleImputer`` without indicators (identity on
  the kept columns; a missing raw value has no derivative and is refused);
- :class:`~sklearn.preprocessing.PolynomialFeatures` (from ``powers_``);
- :class:`~sklearn.preprocessing.SplineTransformer` (derivatives of the fitted
  B-splines ``bsplines_``; ``extrapolation``: ``"error"``/``"continue"`` the spline's
  own derivative (the polynomial continuation outside the knots), ``"periodic"`` the
  derivative at the wrapped value, ``"constant"`` zero outside the knots, ``"linear"``
  the edge slope outside the knots; ``include_bias=False`` drops the same column; at the
  two boundary knots, where ``"constant"`` has a kink, the inside
  derivative is used);
- :class:`~sklearn.kernel_approximation.RBFSampler`:
  ``-sqrt(2 / D) sin(x W + b) W^T``;
- :class:`~sklearn.kernel_approximation.Nystroem` with ``kernel`` ``"rbf"``,
  ``"laplacian"`` (derivative undefined where a coordinate equals a component's),
  ``"poly"``/``"polynomial"``, ``"linear"``, ``"sigmoid"`` or ``"cosine"``:
  ``normalization_ dK(x, components_) / dx``; other kernels are refused. Its
  ``components_`` are rows of its training input, i.e. training rows published
  verbatim: :attr:`FeatureMap.published` says so and :meth:`FeatureMap.jacobian_blocks`
  reports which rows;
- :class:`~sklearn.preprocessing.FunctionTransformer` with ``func=None`` (identity), a
  NumPy ufunc of known derivative (``np.log``, ``np.log1p``, ``np.exp``, ``np.expm1``,
  ``np.sqrt``, ``np.square``, ``np.arcsinh``, ``np.tanh``, ``np.sin``, ``np.cos``), or a
  ``func`` carrying a **``derivative`` attribute**: a callable taking the step's input
  as a float array ``(m, k)`` (and the ``kw_args``) and returning either the
  element-wise derivative ``(m, k)`` (an element-wise, one-to-one ``func``) or the full
  Jacobian ``(m, k_out, k)``::

      def log_income(X):
          return np.log1p(X)
      log_income.derivative = lambda X: 1.0 / (1.0 + X)
      FunctionTransformer(log_income, feature_names_out="one-to-one")

Refused (by name, with the reason): ``KBinsDiscretizer`` and ``Binarizer`` (piecewise
constant: the derivative is zero almost everywhere although the bin reveals the
value), ``MissingIndicator`` / ``add_indicator``, ``QuantileTransformer``,
``PowerTransformer``, tree embeddings, an encoder on derived columns, a
``FunctionTransformer`` without a known derivative, and any other transformer.

Interface
---------
``fmap = feature_map(pipeline)`` traces the preprocessing of a fitted pipeline (or a list
of fitted steps); ``fmap.refusals`` lists what prevents differentiation (empty when
none); ``fmap.jacobian(X)`` yields ``(rows, J)`` chunks with ``J`` of shape
``(m, n_outputs, n_coordinates)``, ``J[i, k, u] = d phi_k(x_i) / d coordinate_u``;
:meth:`FeatureMap.jacobian_blocks` gives the same as a few dense blocks (cheaper to
contract: a spline column touches only its own basis columns).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    SplineTransformer,
)

from ...utils._pipeline import encoder_output_counts
from ...utils.fixes import column_transformer_input_indices
from ._derivatives import (
    _function_derivative,
    _is_scaler,
    _nystroem_derivative,
    _poly_derivative,
    _rbf_sampler_derivative,
    _scaler_derivative,
    _spline_derivative,
)

__all__ = ["FeatureMap", "feature_map"]

#: Nystroem kernels whose gradient is implemented.
NYSTROEM_KERNELS = ("rbf", "laplacian", "poly", "polynomial", "linear", "sigmoid", "cosine")

_REFUSED_REASONS = {
    "KBinsDiscretizer": "it is piecewise constant: its derivative is zero almost everywhere "
                        "although the bin reveals the value",
    "Binarizer": "it is piecewise constant: its derivative is zero almost everywhere "
                 "although the output reveals which side of the threshold the value is on",
    "MissingIndicator": "its output (whether a value is missing) has no derivative",
    "QuantileTransformer": "its derivative (the fitted quantile density) is not implemented",
    "PowerTransformer": "its derivative is not implemented",
    "RandomTreesEmbedding": "a tree embedding is piecewise constant",
    "TargetEncoder": "it encodes with statistics of the labels, not a differentiable map",
}


def _step_name(step):
    return type(step).__name__


def _overridden_transform(step):
    """Name of the scikit-learn (or package) class whose ``transform`` a user subclass
    ``step`` overrides, or None (not a subclass, or ``transform`` inherited).

    Derivatives are dispatched by ``isinstance``; a subclass that changes the map would
    otherwise get its base class's derivative (a silently wrong eta).
    """
    cls = type(step)
    if cls.__module__.startswith(("sklearn.", "sklearn_privacy.")):
        return None
    for base in cls.__mro__[1:]:
        if base.__module__.startswith(("sklearn.", "sklearn_privacy.")) and \
                hasattr(base, "transform"):
            return None if cls.transform is base.transform else base.__name__
    return None


def _output_width(step, n_in):
    """Output width of a fitted step of a constant map, from its input width ``n_in``.

    ``get_feature_names_out`` when the step has it; a ``FunctionTransformer`` without
    ``feature_names_out`` (the identity: ``func=None``) has none, nor has a pipeline or
    column transformer holding one, so their widths are added up from their parts.
    """
    try:
        return len(step.get_feature_names_out())
    except (AttributeError, ValueError, TypeError):
        if isinstance(step, FunctionTransformer) and step.func is None:
            return n_in
        if isinstance(step, Pipeline):
            for _, s in step.steps:
                if not (s is None or (isinstance(s, str) and s == "passthrough")):
                    n_in = _output_width(s, n_in)
            return n_in
        if isinstance(step, ColumnTransformer):
            total = 0
            for name, trans, _ in step.transformers_:
                k = len(column_transformer_input_indices(step, name))
                if isinstance(trans, str):
                    total += k if trans == "passthrough" else 0
                elif k:
                    total += _output_width(trans, k)
            return total
        raise


def _is_encoder(step):
    return isinstance(step, (OneHotEncoder, OrdinalEncoder))


def _categorical_block(step):
    """The encoder of a step that encodes raw columns (an encoder, possibly after
    imputers), or None."""
    if _is_encoder(step):
        return step
    if isinstance(step, Pipeline):
        real = [s for _, s in step.steps if s is not None and s != "passthrough"]
        if real and _is_encoder(real[-1]) and all(isinstance(s, SimpleImputer)
                                                  and not s.add_indicator
                                                  for s in real[:-1]):
            return real[-1]
    return None


def _dense(Z):
    """Float64 ndarray of a step's input (DataFrame, sparse matrix or array)."""
    if hasattr(Z, "to_numpy"):
        Z = Z.to_numpy()
    if sp.issparse(Z):
        Z = Z.toarray()
    return np.asarray(Z, dtype=np.float64)


def _take_columns(Z, idx):
    if hasattr(Z, "iloc"):
        return Z.iloc[:, idx]
    return Z[:, idx]


def _take_rows(X, rows):
    if hasattr(X, "iloc"):
        return X.iloc[rows]
    return X[rows]


# ---------------------------------------------------------------------- block algebra
# A Jacobian is a list of blocks ``(out, inp, J, diag)``: the map's derivative is the sum
# of the blocks, block ``J[:, a, b]`` contributing to output ``out[a]`` and coordinate
# ``inp[b]`` (``diag``: ``J`` is ``(m, L)`` or None for ones, contributing ``J[:, a]`` to
# ``(out[a], inp[a])``).


def _select(blocks, cols, n_cur):
    """Blocks of the columns ``cols`` of the current output (renumbered 0..len-1)."""
    pos = np.full(n_cur, -1, dtype=np.intp)
    pos[np.asarray(cols, dtype=np.intp)] = np.arange(len(cols))
    out = []
    for o, i, J, diag in blocks:
        keep = pos[o] >= 0
        if not keep.any():
            continue
        if diag:
            out.append((pos[o[keep]], i[keep], None if J is None else J[:, keep], True))
        else:
            out.append((pos[o[keep]], i, J[:, keep, :], False))
    return out


def _scale(blocks, s):
    """Blocks after an element-wise step of derivative ``s`` (m, n_cur)."""
    out = []
    for o, i, J, diag in blocks:
        if diag:
            out.append((o, i, s[:, o] if J is None else J * s[:, o], True))
        else:
            out.append((o, i, J * s[:, o, None], False))
    return out


def _compose(blocks, step_blocks, n_cur):
    """Blocks after a step whose derivative is the blocks ``(s_out, s_in, Js)``,
    ``Js`` of shape (m, |s_out|, |s_in|) over the current outputs ``s_in``."""
    out = []
    for s_out, s_in, Js in step_blocks:
        pos = np.full(n_cur, -1, dtype=np.intp)
        pos[s_in] = np.arange(len(s_in))
        for o, i, J, diag in blocks:
            p = pos[o]
            keep = p >= 0
            if not keep.any():
                continue
            if diag:
                vals = 1.0 if J is None else J[:, None, keep]
                out.append((s_out, i[keep], Js[:, :, p[keep]] * vals, False))
            else:
                out.append((s_out, i, np.matmul(Js[:, :, p[keep]], J[:, keep, :]), False))
    return out


def _shift(blocks, offset):
    return [(o + offset, i, J, diag) for o, i, J, diag in blocks]


def blocks_to_dense(blocks, m, n_outputs, n_coordinates):
    """Dense ``(m, n_outputs, n_coordinates)`` Jacobian from blocks."""
    full = np.zeros((m, n_outputs, n_coordinates))
    for o, i, J, diag in blocks:
        if diag:
            full[:, o, i] += 1.0 if J is None else J
        else:
            full[:, o[:, None], i[None, :]] += J
    return full


# ---------------------------------------------------------------------- the map
class FeatureMap:
    """The traced preprocessing of a fitted pipeline and its derivative.

    Built by :func:`feature_map`; see the module docstring for the supported steps and
    what the raw coordinates are.

    Attributes
    ----------
    steps : list of fitted transformers
        The preprocessing, in order.
    feature_names_in : list of str
        Names of the raw input columns (``"x0"``, ... without names).
    coordinate_names : list of str
        Names of the raw coordinates: a numeric column's name, or the encoder's name of
        each encoded level of a categorical column (e.g. ``"race_White"``).
    feature_coordinates : list of ndarray of int
        Coordinates of each raw input column (empty for a column the map drops).
    n_coordinates : int
        Number of raw coordinates.
    refusals : list of str
        One message per step that prevents differentiation (empty: differentiable).
    published : list of str
        Steps whose fitted state holds training rows verbatim (Nystroem
        ``components_``); the rows are reported by :meth:`jacobian_blocks`.
    constant : bool
        Whether the derivative is the same at every row (scalers without clipping,
        encoders, identity): then :meth:`jacobian_blocks` needs no data beyond the row
        count.
    """

    def __init__(self, steps, feature_names_in, n_features_in):
        self.steps = list(steps)
        self.n_features_in = int(n_features_in)
        self.named = feature_names_in is not None  # fitted on a frame with column names
        self.feature_names_in = (list(map(str, feature_names_in))
                                 if feature_names_in is not None
                                 else [f"x{i}" for i in range(self.n_features_in)])
        self.refusals = []
        self.published = []
        self.constant = True
        self._categorical = {}  # raw feature -> list of coordinate names
        self._used_numeric = np.zeros(self.n_features_in, bool)
        self._scan_chain(self.steps, np.arange(self.n_features_in), "")
        both = [self.feature_names_in[r] for r in self._categorical
                if self._used_numeric[r]]
        if both:
            self.refusals.append(
                f"raw columns {both} are both encoded and used as numbers by the "
                "preprocessing; their raw coordinates are ambiguous")
        names, coords = [], []
        for r in range(self.n_features_in):
            if r in self._categorical:
                levels = self._categorical[r]
                coords.append(np.arange(len(names), len(names) + len(levels)))
                names.extend(levels)
            elif self._used_numeric[r]:
                coords.append(np.array([len(names)]))
                names.append(self.feature_names_in[r])
            else:
                coords.append(np.array([], dtype=np.intp))
        self.coordinate_names = names
        self.feature_coordinates = coords
        self.n_coordinates = len(names)
        self.numeric_coordinates = np.array(
            [c[0] for r, c in enumerate(coords) if r not in self._categorical and c.size],
            dtype=np.intp)

    # -------------------------------------------------------------- structural scan
    def _refuse(self, path, step, why):
        self.refusals.append(f"{path or 'step'} ({_step_name(step)}): {why}")

    def _scan_chain(self, steps, rawcol, path):
        for s in steps:
            if s is None or (isinstance(s, str) and s == "passthrough"):
                continue
            self._scan(s, rawcol, path + ("/" if path else "") + _step_name(s).lower())
            rawcol = None

    def _mark_numeric(self, rawcol):
        if rawcol is not None:
            self._used_numeric[rawcol[rawcol >= 0]] = True

    def _scan(self, step, rawcol, path):
        base = _overridden_transform(step)
        if base is not None:  # the derivative of the base class is not this map's
            self._refuse(path, step, f"a subclass of {base} that overrides transform; the "
                         f"derivative of {base} does not describe it")
            return
        enc = _categorical_block(step)
        if enc is not None:
            if rawcol is None or np.any(rawcol < 0):
                self._refuse(path, step, "an encoder of derived (not raw) columns; encode "
                             "raw categorical columns directly, before any other step")
                return
            try:  # named after the raw columns, whatever the encoder was fitted on
                names = [str(n) for n in enc.get_feature_names_out(
                    [self.feature_names_in[r] for r in rawcol])]
            except (ValueError, TypeError):
                names = [str(n) for n in enc.get_feature_names_out()]
            start = 0
            for r, c in zip(rawcol, encoder_output_counts(enc), strict=True):
                if r in self._categorical:
                    self._refuse(path, step, f"raw column {self.feature_names_in[r]!r} "
                                 "is encoded twice")
                self._categorical[int(r)] = names[start:start + c]
                start += c
            return
        if isinstance(step, Pipeline):
            self._scan_chain([s for _, s in step.steps], rawcol, path)
            return
        if isinstance(step, ColumnTransformer):
            for name, trans, _ in step.transformers_:
                idx = np.asarray(column_transformer_input_indices(step, name), int)
                if (isinstance(trans, str) and trans == "drop") or idx.size == 0:
                    continue
                sub = None if rawcol is None else rawcol[idx]
                if isinstance(trans, str) and trans == "passthrough":
                    self._mark_numeric(sub)
                    continue
                self._scan(trans, sub, f"{path}/{name}")
            return
        self._mark_numeric(rawcol)
        if _is_scaler(step):
            if isinstance(step, MinMaxScaler) and step.clip:
                self.constant = False
            from ...preprocessing import BoundedScaler, DPStandardScaler
            if isinstance(step, (BoundedScaler, DPStandardScaler)):
                self.constant = False
            return
        if isinstance(step, SimpleImputer):
            if step.add_indicator:
                self._refuse(path, step, "add_indicator=True appends missingness "
                             "indicators, which have no derivative")
            return
        if isinstance(step, (PolynomialFeatures, SplineTransformer, RBFSampler)):
            self.constant = False
            return
        if isinstance(step, Nystroem):
            self.constant = False
            if callable(step.kernel) or step.kernel not in NYSTROEM_KERNELS:
                self._refuse(path, step, f"kernel {step.kernel!r} has no derivative here "
                             f"(supported: {', '.join(NYSTROEM_KERNELS)})")
            self.published.append(
                f"{path} (Nystroem): components_ holds {len(step.components_)} rows of "
                "its training input verbatim (component_indices_); the model publishes "
                "those training rows, whatever the noise on the final step")
            return
        if isinstance(step, FunctionTransformer):
            if step.func is not None:
                self.constant = False
            if _function_derivative(step) is None:
                fname = getattr(step.func, "__name__", repr(step.func))
                self._refuse(path, step, f"func={fname} has no known derivative; give it "
                             "a `derivative` attribute (see the FIL user guide, "
                             "'Raw inputs through feature maps')")
            return
        why = _REFUSED_REASONS.get(_step_name(step),
                                   "no derivative is known for this transformer")
        self._refuse(path, step, why)

    # -------------------------------------------------------------- derivatives
    def check(self, what="the raw-input Jacobian"):
        """Raise a ValueError naming every refused step (no-op when there is none)."""
        if self.refusals:
            raise ValueError(
                f"{what} cannot be computed: " + "; ".join(self.refusals)
                + ". Use wrt='features' for the eta of the features entering the final "
                "step.")

    def _initial_blocks(self):
        num = [r for r in range(self.n_features_in)
               if r not in self._categorical and self.feature_coordinates[r].size]
        if not num:
            return []
        num = np.asarray(num, dtype=np.intp)
        coords = np.array([self.feature_coordinates[r][0] for r in num], dtype=np.intp)
        return [(num, coords, None, True)]

    def jacobian_blocks(self, X, *, row_offset=0, published_rows=None, output=True):
        """``phi(X)`` and its derivative at the rows ``X`` as blocks.

        Parameters
        ----------
        X : DataFrame, ndarray or sparse matrix of shape (m, n_features_in)
            Raw input rows (as given to the pipeline).
        row_offset : int, default=0
            Index of ``X``'s first row among the training rows (for ``published_rows``).
        published_rows : list or None
            When a list, the training-row indices (``row_offset`` + position) of the
            rows of ``X`` that a Nystroem step publishes verbatim are appended to it.
        output : bool, default=True
            Whether to compute ``Z`` (the last step's transform is skipped otherwise).

        Returns
        -------
        Z : ndarray, sparse matrix of shape (m, n_outputs), or None
            The preprocessing's output (what the final step receives); None when
            ``output`` is false.
        blocks : list of tuples ``(out, coords, J, diag)``
            The derivative ``d phi / d coordinates`` is the sum of the blocks: with
            ``diag`` false, ``J`` (m, len(out), len(coords)) adds to
            ``[:, out, coords]``; with ``diag`` true, ``J`` (m, len(out)) -- or ones
            when None -- adds to the pairs ``[:, out[a], coords[a]]``.
        """
        self.check()
        ctx = {"offset": int(row_offset), "published": published_rows}
        num = self.numeric_coordinates
        if num.size:
            vals = _dense(_take_columns(
                X, [r for r in range(self.n_features_in)
                    if r not in self._categorical and self.feature_coordinates[r].size]))
            if not np.all(np.isfinite(vals)):
                raise ValueError(
                    "X: a numeric raw input is missing or infinite; the derivative of the "
                    "map at a missing value is not defined. Impute the rows first or use "
                    "wrt='features'.")
        m = X.shape[0]
        J = self._initial_blocks()
        Z = X
        rawcol = np.arange(self.n_features_in)
        real = [s for s in self.steps if not (s is None or (isinstance(s, str)
                                                            and s == "passthrough"))]
        for k, s in enumerate(real):
            J = self._jac(s, Z, J, rawcol, m, ctx)
            Z = s.transform(Z) if (output or k < len(real) - 1) else None
            rawcol = None
        return Z, J

    def jacobian(self, X, *, chunk_rows=None):
        """Dense per-row Jacobians ``d phi(x_i) / d coordinates``, chunk by chunk.

        Parameters
        ----------
        X : DataFrame, ndarray or sparse matrix of shape (n, n_features_in)
            Raw input rows.
        chunk_rows : int or None, default=None
            Rows per chunk (None: about 32 MB per chunk).

        Yields
        ------
        rows : slice
            The rows of ``X`` in this chunk.
        J : ndarray of shape (m, n_outputs, n_coordinates)
            ``J[i, k, u] = d phi_k / d coordinate_u`` at row ``rows.start + i``.
        """
        n = X.shape[0]
        for sl, Z, blocks in self.iter_blocks(X, chunk_rows=chunk_rows):
            yield sl, blocks_to_dense(blocks, sl.stop - sl.start, Z.shape[1],
                                      self.n_coordinates)
        if n == 0:
            return

    def iter_blocks(self, X, *, chunk_rows=None, published_rows=None, n_outputs=None):
        """``(rows, Z, blocks)`` of :meth:`jacobian_blocks` over row chunks of ``X``."""
        n = X.shape[0]
        if chunk_rows is None:
            width = max(1, (n_outputs or 64) * max(self.n_coordinates, 1))
            chunk_rows = max(16, int(4_000_000 // width))
        for start in range(0, n, chunk_rows):
            sl = slice(start, min(n, start + chunk_rows))
            Z, blocks = self.jacobian_blocks(_take_rows(X, sl), row_offset=start,
                                             published_rows=published_rows)
            yield sl, Z, blocks

    def coordinates(self, X):
        """Raw coordinate values of the rows ``X``: ``(n, n_coordinates)`` floats.

        Numeric columns as given; categorical columns as their encoder's output (the
        one-hot indicators).
        """
        out = np.zeros((X.shape[0], self.n_coordinates))
        for r in range(self.n_features_in):
            c = self.feature_coordinates[r]
            if c.size and r not in self._categorical:
                out[:, c[0]] = _dense(_take_columns(X, [r]))[:, 0]
        self._fill_categorical(self.steps, X, np.arange(self.n_features_in), out)
        return out

    def _fill_categorical(self, steps, Z, rawcol, out):
        for s in steps:
            if s is None or (isinstance(s, str) and s == "passthrough"):
                continue
            if _categorical_block(s) is not None:
                self._put_encoded(s, Z, rawcol, out)
            elif isinstance(s, ColumnTransformer):
                for name, trans, _ in s.transformers_:
                    idx = np.asarray(column_transformer_input_indices(s, name), int)
                    if (isinstance(trans, str)) or idx.size == 0:
                        continue
                    if _categorical_block(trans) is not None:
                        self._put_encoded(trans, _take_columns(Z, idx), rawcol[idx], out)
            return  # encoders act on raw columns only: the first step

    def _put_encoded(self, step, Z, rawcol, out):
        enc = _dense(step.transform(Z))
        coords = np.concatenate([self.feature_coordinates[r] for r in rawcol])
        out[:, coords] = enc

    @staticmethod
    def _next(step, Z, ctx):
        """The step's output (zeros of its width in the symbolic pass of a constant map)."""
        if ctx.get("symbolic"):
            return np.zeros((1, _output_width(step, Z.shape[1])))
        return step.transform(Z)

    def constant_blocks(self, n_outputs=None):
        """The derivative of a map that does not depend on the row (``constant``), as
        blocks with one row (broadcast over any rows), computed without data."""
        self.check()
        if not self.constant:
            raise ValueError("constant_blocks: this map's derivative depends on the row.")
        ctx = {"offset": 0, "published": None, "symbolic": True}
        J = self._initial_blocks()
        Z = np.zeros((1, self.n_features_in))
        rawcol = np.arange(self.n_features_in)
        for s in self.steps:
            if s is None or (isinstance(s, str) and s == "passthrough"):
                continue
            J = self._jac(s, Z, J, rawcol, 1, ctx)
            Z = self._next(s, Z, ctx)
            rawcol = None
        if n_outputs is not None and Z.shape[1] != n_outputs:
            raise ValueError(f"the preprocessing outputs {Z.shape[1]} columns but the final "
                             f"step has {n_outputs} inputs; the map was not understood.")
        return J

    def _jac(self, step, Z, J, rawcol, m, ctx):
        """Blocks of the derivative after ``step`` from those before it (input ``Z``)."""
        if _categorical_block(step) is not None:
            coords = np.concatenate([self.feature_coordinates[r] for r in rawcol])
            return [(np.arange(coords.size), coords, None, True)]
        if isinstance(step, Pipeline):
            real = [s for _, s in step.steps
                    if not (s is None or (isinstance(s, str) and s == "passthrough"))]
            for k, s in enumerate(real):
                J = self._jac(s, Z, J, rawcol, m, ctx)
                if k < len(real) - 1:  # the last step's output is not needed here
                    Z = self._next(s, Z, ctx)
                rawcol = None
            return J
        n_cur = Z.shape[1]
        if isinstance(step, ColumnTransformer):
            out = []
            for name, trans, _ in step.transformers_:
                idx = np.asarray(column_transformer_input_indices(step, name), int)
                sl = step.output_indices_.get(name)
                if (isinstance(trans, str) and trans == "drop") or idx.size == 0 or \
                        sl is None or sl.stop == sl.start:
                    continue
                sub = _select(J, idx, n_cur)
                if not (isinstance(trans, str) and trans == "passthrough"):
                    sub = self._jac(trans, _take_columns(Z, idx), sub,
                                    None if rawcol is None else rawcol[idx], m, ctx)
                out.extend(_shift(sub, sl.start))
            return out
        if isinstance(step, SimpleImputer):
            stats = np.asarray(step.statistics_, dtype=object)
            keep = np.ones(n_cur, bool)
            if not getattr(step, "keep_empty_features", False) and step.strategy != "constant":
                keep = np.array([not (isinstance(v, float) and np.isnan(v)) for v in stats])
            Zd = _dense(Z)
            if not np.all(np.isfinite(Zd)):
                raise ValueError("X: a value imputed by SimpleImputer is missing in the raw "
                                 "rows; a missing value has no derivative. Use "
                                 "wrt='features'.")
            return _select(J, np.flatnonzero(keep), n_cur)
        Zd = _dense(Z)
        s = _scaler_derivative(step, Zd)
        if s is not None:
            return _scale(J, s)
        if isinstance(step, FunctionTransformer):
            deriv = _function_derivative(step)
            D = np.asarray(deriv(Zd, **(step.kw_args or {})), dtype=float)
            if D.shape == Zd.shape:
                return _scale(J, D)
            if D.ndim == 3 and D.shape[0] == m and D.shape[2] == n_cur:
                return _compose(J, [(np.arange(D.shape[1]), np.arange(n_cur), D)], n_cur)
            raise ValueError(
                f"FunctionTransformer: func.derivative returned shape {D.shape}; expected "
                f"{Zd.shape} (element-wise) or ({m}, n_outputs, {n_cur}) (full Jacobian).")
        if isinstance(step, SplineTransformer):
            return _compose(J, _spline_derivative(step, Zd), n_cur)
        if isinstance(step, PolynomialFeatures):
            return _compose(J, _poly_derivative(step, Zd), n_cur)
        if isinstance(step, RBFSampler):
            return _compose(J, _rbf_sampler_derivative(step, Zd), n_cur)
        if isinstance(step, Nystroem):
            if ctx["published"] is not None:
                C = np.ascontiguousarray(step.components_, dtype=float)
                view = np.dtype((np.void, 8 * C.shape[1]))
                hit = np.isin(np.ascontiguousarray(Zd).view(view).ravel(),
                              C.view(view).ravel())
                ctx["published"].extend((ctx["offset"] + np.flatnonzero(hit)).tolist())
            return _compose(J, _nystroem_derivative(step, Zd), n_cur)
        raise ValueError(f"{_step_name(step)} has no derivative here.")  # pragma: no cover


def feature_map(estimator, *, n_features_in=None, feature_names_in=None) -> FeatureMap:
    """Trace the preprocessing of a fitted pipeline (or a list of fitted steps).

    Parameters
    ----------
    estimator : Pipeline or list of fitted transformers
        A fitted :class:`~sklearn.pipeline.Pipeline` (its steps before the final
        estimator are the map) or the fitted preprocessing steps themselves.
    n_features_in, feature_names_in : optional
        The raw input's width and column names (default: read from the first step).

    Returns
    -------
    fmap : FeatureMap
        Check ``fmap.refusals`` (or call ``fmap.check()``) before asking for
        derivatives.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import SplineTransformer, StandardScaler
    >>> from sklearn_privacy.fil._raw._feature_maps import feature_map
    >>> X = np.random.RandomState(0).normal(size=(40, 2))
    >>> pipe = make_pipeline(StandardScaler(), SplineTransformer(n_knots=4),
    ...                      Ridge()).fit(X, X[:, 0])
    >>> fmap = feature_map(pipe)
    >>> fmap.refusals, fmap.n_coordinates
    ([], 2)
    >>> (rows, J), = fmap.jacobian(X)
    >>> J.shape   # (rows, spline columns, raw columns)
    (40, 12, 2)
    """
    if isinstance(estimator, Pipeline):
        steps = [s for _, s in estimator.steps[:-1] if s is not None and s != "passthrough"]
        final = estimator.steps[-1][1]
        if isinstance(final, Pipeline):
            inner = [s for _, s in final.steps[:-1] if s is not None and s != "passthrough"]
            steps = steps + inner
        first = estimator
    else:
        steps = list(estimator)
        first = steps[0] if steps else None
    if n_features_in is None:
        holder = first
        if isinstance(holder, Pipeline):
            holder = next((s for _, s in holder.steps
                           if s is not None and s != "passthrough"), None)
        n_features_in = getattr(holder, "n_features_in_", None)
        if feature_names_in is None:
            feature_names_in = getattr(holder, "feature_names_in_", None)
    if n_features_in is None:
        raise ValueError("feature_map: the raw input width is unknown (the pipeline is "
                         "not fitted); fit it first or pass n_features_in.")
    return FeatureMap(steps, feature_names_in, n_features_in)
