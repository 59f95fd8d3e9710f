"""Interchangeable symbols: the diagonal-moment relaxation on classes (docs/design.md §7.7).

Implements: the symmetry reduction of the relaxation of docs/design.md §7.3 (core paper eq. (9), A criterion). Two
symbols are *interchangeable* when swapping them maps the uncertainty set and the prior onto themselves: the same
prior probability and the same ball centre (for an ℓ1 ball; the simplex and a single fixed distribution are balls),
or the same probability under every distribution of a finite set. The relaxation is convex and invariant under
these swaps, so averaging any dual point over them loses nothing: its optimum is attained by multipliers (g, ν)
constant on each class. For such g the spectrum of ``Q = A₀ᵀ Diag(g) A₀`` is ``g_j`` repeated ``n_j − 1`` times
for each class j, and the spectrum of ``W₀ᵀ Diag(g_j) W₀`` ((G − 1) × (G − 1), G the number of classes;
:func:`class_frame`), because ``A₀A₀ᵀ = (I − 1πᵀ)(I − π1ᵀ)``. So

    2 tr Q^½ = 2 Σ_j (n_j − 1)√g_j + 2 tr (W₀ᵀ Diag(g) W₀)^½,

and every pool ray ``r`` enters the relaxed master only through its class sums ``Σ_{x∈j} r_x`` and
``Σ_{x∈j} r_x²``: one ray stands for all its permutations within the classes. The master then has 2G unknowns
instead of 2N (Zipf columns from 5 000 rows: 42–50 classes at N = 50 … 3 000; Adult native-country: 20 of 41).
The validity of a value needs no symmetry at all: any g constant on classes of equal prior gives the identity above.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...uncertainty import FiniteSet, UncertaintySet
from .bound import _ball_form
from .coordinate_bound import _spectral_dual

__all__ = ["SymbolClasses", "class_frame", "symbol_classes"]


@dataclass(frozen=True)
class SymbolClasses:
    """Classes of interchangeable symbols (:func:`symbol_classes`): ``labels[x]`` is symbol x's class (0 … G−1, in
    order of first appearance), ``counts`` the class sizes ``n_j``, ``prior`` the class prior ``π_j``, ``frame`` the
    G × (G − 1) matrix ``W₀`` of :func:`class_frame`, ``first`` a representative symbol of each class and
    ``indicator`` the G × N matrix of class membership."""

    labels: np.ndarray
    counts: np.ndarray
    prior: np.ndarray
    frame: np.ndarray = field(repr=False)
    first: np.ndarray = field(repr=False)
    indicator: np.ndarray = field(repr=False)

    @property
    def size(self) -> int:
        """G, the number of classes."""
        return int(self.counts.size)

    @property
    def reduces(self) -> bool:
        """Whether some two symbols are interchangeable (G < N)."""
        return self.size < self.labels.size

    def sums(self, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(Σ_{x∈j} r_x, Σ_{x∈j} r_x²)`` for every column r of ``R`` (N × K): two G × K arrays."""
        return self.indicator @ R, self.indicator @ (R * R)

    def reduce(self, v: np.ndarray) -> np.ndarray | None:
        """The class values of a vector constant on every class, or None when it is not (to the last bit)."""
        red = v[self.first]
        return red if np.array_equal(red[self.labels], v) else None

    def dual_value(self, g: np.ndarray, nu: np.ndarray, phi_max: float, r2_max: float) -> float | None:
        """:func:`.moment_bound.moment_dual_value` for multipliers constant on the classes (None when they are not),
        from the (G − 1) × (G − 1) spectrum and the repeated ``g_j`` (module docstring), with the same backward-error margin
        and the same raise of g by δ where Q is not positive definite beyond that margin.

        Implements: docs/design.md §7.7 (the dual of §7.3 on classes).

        Parameters
        ----------
        g, nu : numpy.ndarray, shape (N,)
            The multipliers.
        phi_max : float
            An upper bound of ``max_r Σ g_x r_x² − ν·r`` over the normalised rays.
        r2_max : float
            An upper bound of ``‖r‖²`` on the normalised rays (used only where g must be raised).

        Returns
        -------
        float or None
            A valid lower bound of the optimal A error at the best scale (``-inf`` when none), or None.
        """
        gr, nr = self.reduce(g), self.reduce(nu)
        if gr is None or nr is None:
            return None
        w = np.linalg.eigvalsh((self.frame * gr[:, None]).T @ self.frame) if self.size > 1 else np.zeros(0)
        rep = self.counts > 1  # g_j, n_j − 1 times: exact, no eigensolver
        return _spectral_dual(np.concatenate([w, gr[rep]]),
                              np.concatenate([np.ones(w.size), self.counts[rep] - 1.0]), self.labels.size,
                              float(self.counts @ gr), float(self.counts @ nr), phi_max, r2_max)


def class_frame(counts: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """``W₀ = (I − ŝρᵀ)U`` (G × (G − 1)): ``ŝ_j = √n_j``, ``ρ_j = √n_j π_j``, ``U`` an orthonormal basis of ``ŝ^⊥``.

    Implements: docs/design.md §7.7. ``A₀A₀ᵀ = (I − 1πᵀ)(I − π1ᵀ)`` (§7.3's frame), so on the class indicators
    ``e_j = 1_j/√n_j`` the nonzero spectrum of ``Q`` is that of ``W₀ᵀ Diag(g) W₀``; ``(I − ŝρᵀ)ŝ = 0`` (``π`` sums
    to one), so ``U`` drops only the zero eigenvalue.

    Parameters
    ----------
    counts : numpy.ndarray, shape (G,)
        The class sizes.
    prior : numpy.ndarray, shape (G,)
        Each class's prior probability (per symbol).

    Returns
    -------
    numpy.ndarray, shape (G, G − 1)
    """
    s = np.sqrt(np.asarray(counts, dtype=float))
    rho = s * np.asarray(prior, dtype=float)
    G = s.size
    Q, _ = np.linalg.qr(np.column_stack([s, np.eye(G)[:, : G - 1]]))
    U = Q[:, 1:G]
    return U - np.outer(s, rho @ U)


def symbol_classes(uset: UncertaintySet, prior: np.ndarray) -> SymbolClasses:
    """The classes of interchangeable symbols of ``uset`` at ``prior`` (module docstring).

    Implements: the symmetry group of the relaxation of docs/design.md §7.3 (§7.7): symbols with the same prior
    probability and the same ball centre (ℓ1 balls of radius below 2, one fixed distribution; a radius of 2 or more,
    like the simplex, needs the same prior only), or the same probability under every distribution of a finite set;
    every other set gives singletons.

    Parameters
    ----------
    uset : UncertaintySet
    prior : numpy.ndarray, shape (N,)
        The prior (positive, summing to one).

    Returns
    -------
    SymbolClasses
    """
    pi = np.asarray(prior, dtype=float)
    form = _ball_form(uset, pi)
    if form is not None and form[1] >= 2.0:  # the whole simplex, whatever the centre
        keys = pi[:, None]
    elif form is not None:
        keys = np.column_stack([pi, np.asarray(form[0], dtype=float)])
    elif isinstance(uset, FiniteSet):
        keys = np.column_stack([pi, np.asarray(uset.distributions, dtype=float).T])
    else:
        keys = np.column_stack([pi, np.arange(pi.size, dtype=float)])
    _, first, labels = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # classes in order of first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    labels = rank[np.asarray(labels).reshape(-1)]
    first = first[order]
    counts = np.bincount(labels, minlength=first.size)
    indicator = np.zeros((first.size, pi.size))
    indicator[labels, np.arange(pi.size)] = 1.0
    return SymbolClasses(labels, counts, pi[first], class_frame(counts, pi[first]), first, indicator)
