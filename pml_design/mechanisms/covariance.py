"""The asymptotic covariance of a frequency estimate on the simplex: the constrained inverse of a Fisher information.

Implements: the constrained Cramér–Rao bound ``U (Uᵀ F U)⁺ Uᵀ`` (Aitchison & Silvey 1958) of
:meth:`pml_design.mechanisms.mechanism.Mechanism.estimate_covariance` and :func:`pml_design.cohort.combined_estimate`
(docs/design.md §8), by a Cholesky factor where the scaled F is safely positive definite, else by an
eigendecomposition. Moved out of ``mechanism.py`` (its 600-line limit); ``mechanism`` re-exports the names.
"""

from __future__ import annotations

import numpy as np

__all__ = ["simplex_covariance"]


def _sum_zero_basis(n: int, normal: np.ndarray | None = None) -> np.ndarray:
    """Orthonormal basis (n × (n−1)) of ``{v : aᵀv = 0}`` (``a = normal``, default all ones: the tangent space of
    the simplex)."""
    a = np.ones(n) if normal is None else normal
    q, _ = np.linalg.qr(np.column_stack([a, np.eye(n)[:, : n - 1]]))
    return q[:, 1:]


#: :func:`_restricted_inverse` works on blocks of rows of about this many entries (32 MB).
ROW_BLOCK_ENTRIES: int = 2**22


def _restricted_inverse(G: np.ndarray, d: np.ndarray) -> np.ndarray | None:
    """``F⁻¹ − F⁻¹11ᵀF⁻¹/(1ᵀF⁻¹1)`` (``= U (UᵀFU)⁻¹ Uᵀ`` for an invertible F, the identity of docs/design.md §8),
    ``F = D^{½} G D^{½}``, from a Cholesky factor of the scaled ``G``; only where ``G − τI`` is positive definite,
    ``τ = 4 N u ‖G‖_F`` (then every eigenvalue of the restricted ``VᵀGV`` is above the cutoff of
    :func:`simplex_covariance`'s eigendecomposition, which would keep them all: the same matrix, without its
    ``O(N³)`` QR, eigendecomposition and four products; N = 5 000: 28 s → ~6 s). None otherwise. The inverse is
    LAPACK's ``potri`` from the factor (``N³/3 + N³/3`` flops, against ``2N³`` for solving with the identity) and
    the rest is done in place by blocks of rows (N = 10 000: 39 → ~15 s, and no N × N temporaries)."""
    from scipy.linalg import lapack  # noqa: PLC0415

    n = G.shape[0]
    tau = 4.0 * n * np.finfo(float).eps * float(np.linalg.norm(G))
    diagonal = G.diagonal().copy()
    G.flat[:: n + 1] -= tau  # shifted in place (an N × N identity and a shifted copy are 1.6 GB at N = 10 000)
    try:
        np.linalg.cholesky(G)
    except np.linalg.LinAlgError:
        return None
    finally:
        G.flat[:: n + 1] = diagonal  # restored bit for bit
    # G is symmetric and C-ordered: G.T is the same matrix in Fortran order, so LAPACK works on it in place, and the
    # upper triangle of its Fortran array is the lower triangle of the C-ordered result
    U, info = lapack.dpotrf(G.T, lower=0, clean=0, overwrite_a=1)
    if info == 0:
        U, info = lapack.dpotri(U, lower=0, overwrite_c=1)
    if info != 0:
        return None
    inv = U.T  # G⁻¹ in its lower triangle
    step = max(1, ROW_BLOCK_ENTRIES // n)
    for i in range(0, n, step):  # the upper triangle from the lower one, then F⁻¹ = D^{-½} G⁻¹ D^{-½}
        j = min(n, i + step)
        inv[i:j, j:] = inv[j:, i:j].T
        upper = np.triu_indices(j - i, 1)
        block = inv[i:j, i:j]
        block[upper] = block.T[upper]
        inv[i:j] /= np.outer(d[i:j], d)  # d_i d_j = d_j d_i exactly: the result stays exactly symmetric
    u = inv.sum(axis=1)  # F⁻¹ 1
    total = u.sum()
    for i in range(0, n, step):
        inv[i:i + step] -= np.outer(u[i:i + step], u) / total
    return inv


def simplex_covariance(fisher: np.ndarray) -> np.ndarray:
    """``U (Uᵀ F U)⁺ Uᵀ``: the inverse of a Fisher information ``F`` about π restricted to the simplex (symmetric).

    Implements: the constrained Cramér–Rao bound of :meth:`Mechanism.estimate_covariance` (Aitchison & Silvey 1958;
    U an orthonormal basis of ``{v : Σv = 0}``); ``F`` is the information of all the reports (or of one, and the
    caller divides by n). Computed after the symmetric diagonal scaling ``G = D^{-1/2} F D^{-1/2}``,
    ``D = diag F``: with ``v = D^{-1/2} u`` the constraint is ``aᵀu = 0``, ``a = D^{-1/2} 1``, and
    ``D^{-1/2} V (Vᵀ G V)⁺ Vᵀ D^{-1/2}`` (V a basis of ``a^⊥``) is a generalised inverse of the restricted ``F``;
    the pseudo-inverse is taken with a relative cutoff on the scaled, well-conditioned ``Vᵀ G V``. Projecting it
    onto the orthogonal complement (within ``Σv = 0``) of its null directions gives the Moore–Penrose form above
    exactly. Without the scaling, one category's information of order ``n e^{ε₁}`` (an ε₁-LDP oracle's report of
    a category estimated at 0, ε₁ ≳ 40) put every other eigenvalue below the cutoff and all variances at 0.

    Parameters
    ----------
    fisher : numpy.ndarray, shape (N, N)
        A symmetric positive semi-definite Fisher information about π (not modified).

    Returns
    -------
    numpy.ndarray, shape (N, N)
        The covariance, exactly symmetric.
    """
    if not np.all(np.isfinite(fisher)):  # (the Cholesky route would return NaN without a word)
        raise ValueError("fisher must be finite: a Fisher information with NaN or infinite entries has no covariance")
    n = fisher.shape[0]
    diag = np.diag(fisher)
    d = np.sqrt(np.where(diag > 0, diag, 1.0))
    fast = _restricted_inverse(fisher / np.outer(d, d), d)  # (its argument is overwritten)
    if fast is not None:
        return fast
    V = _sum_zero_basis(n, 1.0 / d)
    M = V / d[:, None]  # a basis (not orthonormal) of {v : Σv = 0}
    G = fisher / np.outer(d, d)  # unit diagonal where F's is positive
    w, Q = np.linalg.eigh(V.T @ G @ V)
    keep = w > n * np.finfo(float).eps * np.linalg.norm(G)  # rounding in Vᵀ G V is relative to ‖G‖, not to ‖Vᵀ G V‖
    MQ = M @ Q
    cov = (MQ[:, keep] / w[keep]) @ MQ[:, keep].T
    if not np.all(keep):  # singular: the Moore–Penrose inverse of the restricted F, as U (UᵀFU)⁺ Uᵀ gives it
        U = _sum_zero_basis(n)
        null = np.linalg.qr(U.T @ MQ[:, ~keep])[0]
        proj = U @ (np.eye(n - 1) - null @ null.T) @ U.T
        cov = proj @ cov @ proj
    return 0.5 * (cov + cov.T)
