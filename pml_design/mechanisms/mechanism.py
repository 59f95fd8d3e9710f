"""A discrete privacy mechanism you can use: privatize records and estimate the input distribution.

Implements: the local model of the core paper (Section II: ``Y ∼ P_{Y|X=x}`` drawn independently per record)
and the standard frequency-estimation back ends for it: matrix inversion (with Euclidean projection onto
the simplex) and the iterative Bayesian update (IBU, an EM algorithm; Agrawal & Aggarwal 2001).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from .._validation import as_generator, check_mechanism, check_positive_int, check_probability_vector
from ..leakage import _leakage_unchecked
from ..uncertainty import leakage_capacity

__all__ = ["Mechanism", "project_to_simplex"]


def project_to_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection of a vector onto the probability simplex (sort-based, exact)."""
    v = np.asarray(v, dtype=float)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.arange(1, v.shape[0] + 1)
    rho = np.nonzero(u - css / k > 0)[0][-1]
    theta = css[rho] / (rho + 1.0)
    return np.maximum(v - theta, 0.0)


def _as_symbols(data: object, n: int, name: str) -> np.ndarray:
    arr = np.asarray(data)
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.issubdtype(arr.dtype, np.integer):
        if np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise TypeError(f"{name} must be integers in [0, {n}), got dtype {arr.dtype}")
    bad = (arr < 0) | (arr >= n)
    if np.any(bad):
        raise ValueError(f"{name} must lie in [0, {n}); found {int(arr[bad].ravel()[0])}")
    return arr.astype(np.int64, copy=False)


class Mechanism:
    """A row-stochastic matrix (rows = inputs x, columns = outputs y) with the operations users need.

    Parameters
    ----------
    matrix : array_like, shape (N, M)
        Row-stochastic; validated.
    name : str, optional
        A label for tables and plots.

    Examples
    --------
    >>> import numpy as np
    >>> from pml_design.mechanisms import Mechanism
    >>> rr = Mechanism(np.array([[0.75, 0.25], [0.25, 0.75]]), name="RR")
    >>> y = rr.privatize(np.array([0, 1, 1, 0]), rng=0)
    >>> y.shape
    (4,)
    """

    def __init__(self, matrix: object, *, name: str = "mechanism") -> None:
        W = check_mechanism(matrix, "matrix")
        self._W = W / W.sum(axis=1, keepdims=True)
        self._W.setflags(write=False)
        self.name = str(name)
        cum = np.cumsum(self._W, axis=1)
        cum[:, -1] = 1.0
        self._flat_cdf = (cum + np.arange(W.shape[0])[:, None]).ravel()

    # --- basic properties -------------------------------------------------------------------
    @property
    def matrix(self) -> np.ndarray:
        """The (read-only) row-stochastic matrix."""
        return self._W

    @property
    def n_inputs(self) -> int:
        return int(self._W.shape[0])

    @property
    def n_outputs(self) -> int:
        return int(self._W.shape[1])

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        return np.array(self._W, dtype=dtype)

    def __repr__(self) -> str:
        return f"Mechanism(name={self.name!r}, shape={self._W.shape})"

    # --- privacy ------------------------------------------------------------------------------
    def leakage(self, prior: object) -> np.ndarray:
        """ℓ(X → y) per output (core paper, Theorem 1)."""
        p = check_probability_vector(prior, "prior", size=self.n_inputs)
        return _leakage_unchecked(self._W, p)

    def epsilon_min(self, prior: object) -> float:
        """Smallest ε with ε-PML w.r.t. ``prior`` (core paper, Definition 2)."""
        return float(self.leakage(prior).max())

    def capacity(self, uncertainty: object) -> float:
        """Exact worst-case leakage over an uncertainty set (core paper, Definition 5)."""
        return leakage_capacity(self._W, uncertainty)

    # --- use ------------------------------------------------------------------------------------
    def privatize(self, inputs: object, *, rng: object = None) -> np.ndarray:
        """Draw ``Y ∼ P_{Y|X=x}`` independently for every input record.

        Vectorised inverse-CDF sampling: one uniform per record and one ``searchsorted`` into the row CDFs
        laid end to end (row x occupies ``[x, x+1]``), so the cost is O(n log(N·M)) with no Python loop.

        Parameters
        ----------
        inputs : array_like of int
            Secret values in ``{0, …, N−1}`` (any shape).
        rng : numpy.random.Generator, int or None
            Randomness source (None: fresh OS entropy).

        Returns
        -------
        numpy.ndarray of int64, same shape as ``inputs``
            The privatized reports in ``{0, …, M−1}``.
        """
        x = _as_symbols(inputs, self.n_inputs, "inputs")
        g = as_generator(rng)
        u = g.random(x.shape)
        flat = np.searchsorted(self._flat_cdf, x + u, side="right")
        y = flat - x * self.n_outputs
        # guard against rounding at a row's right end and zero-probability cells
        return np.clip(y, 0, self.n_outputs - 1)

    def output_frequencies(self, reports: object) -> np.ndarray:
        """Empirical distribution of privatized reports over the M outputs."""
        y = _as_symbols(reports, self.n_outputs, "reports").ravel()
        return np.bincount(y, minlength=self.n_outputs) / y.shape[0]

    def estimate(
        self,
        reports: object,
        *,
        method: Literal["inversion", "ibu"] = "ibu",
        max_iter: int = 10_000,
        tol: float = 1e-10,
    ) -> np.ndarray:
        """Estimate the input distribution from privatized reports.

        Parameters
        ----------
        reports : array_like of int
            Outputs in ``{0, …, M−1}``.
        method : {"ibu", "inversion"}
            ``"inversion"``: solve ``Wᵀ π = P̂_Y`` (least squares if M ≠ N) and project onto the simplex;
            ``"ibu"``: the iterative Bayesian update (EM; stays on the simplex, converges to the MLE).
        max_iter, tol : int, float
            IBU stopping rule (ℓ1 change between iterates).

        Returns
        -------
        numpy.ndarray, shape (N,)
            A probability vector.
        """
        fy = self.output_frequencies(reports)
        if method == "inversion":
            sol, *_ = np.linalg.lstsq(self._W.T, fy, rcond=None)
            return project_to_simplex(sol)
        if method != "ibu":
            raise ValueError(f"method must be 'inversion' or 'ibu', got {method!r}")
        max_iter = check_positive_int(max_iter, "max_iter")
        W = self._W
        pi = np.full(self.n_inputs, 1.0 / self.n_inputs)
        used = fy > 0
        Wu, fu = W[:, used], fy[used]
        for _ in range(max_iter):
            py = pi @ Wu
            new = pi * (Wu @ (fu / np.where(py > 0, py, 1.0)))
            new /= new.sum()
            if np.abs(new - pi).sum() < tol:
                pi = new
                break
            pi = new
        return pi

    def inversion_covariance(self, prior: object, n: int) -> np.ndarray:
        """Covariance of the (unprojected) inversion estimator from n reports, for a true ``prior``.

        ``Cov = W⁺ᵀ (diag(P_Y) − P_Y P_Yᵀ) W⁺ / n`` with ``W⁺`` the pseudo-inverse of ``Wᵀ`` (the estimator
        is unbiased when W has full row rank).
        """
        p = check_probability_vector(prior, "prior", size=self.n_inputs)
        n = check_positive_int(n, "n")
        py = p @ self._W
        cov_y = (np.diag(py) - np.outer(py, py)) / n
        A = np.linalg.pinv(self._W.T)
        return A @ cov_y @ A.T

    def with_name(self, name: str) -> "Mechanism":
        """A copy with another name."""
        return Mechanism(self._W, name=name)

