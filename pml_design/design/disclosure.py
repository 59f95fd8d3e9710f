"""What a design discloses: outputs that single out an input, and the largest posterior per output.

PML bounds how much more likely any output makes any input than it was a priori; it does not forbid an output
that only one input reaches when that input is common (the bound ``e^ε`` times its prior can exceed 1). Such an
output names its input: whoever sees it knows the record's value. :func:`output_disclosure` lists, per emitted
output, how many inputs reach it, the input it singles out (if it is one), and the largest posterior
``P(x | y)`` over the uncertainty set (:func:`pml_design.uncertainty.max_posterior`, docs/design.md §10), so a
design summary, the command line and the mechanism file say it plainly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..uncertainty import max_posterior

__all__ = ["contained_point_mass", "disclosure_lines", "output_disclosure"]


def _plain_label(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def output_disclosure(matrix: object, uncertainty: object, labels: Sequence[Any] | None = None,
                      output_labels: Sequence[Any] | None = None) -> list[dict]:
    """Per emitted output: the inputs that reach it and the largest posterior ``P(x | y)`` over the set.

    Implements: the disclosure listing of issue 22 (docs/design.md §10), from
    :func:`pml_design.uncertainty.max_posterior`.

    Parameters
    ----------
    matrix : array_like, shape (N, M)
        Row-stochastic mechanism (rows = x, columns = y).
    uncertainty : UncertaintySet or array_like
        The set the guarantee is for (e.g. ``L1Ball(P̂, β)``).
    labels, output_labels : sequence, optional
        Names of the inputs / outputs (default: ``0 … N−1`` / ``0 … M−1``).

    Returns
    -------
    list of dict
        One dict per output with positive probability, in column order: ``output`` (its label), ``inputs``
        (how many inputs reach it), ``singles_out`` (the input label when exactly one input reaches it, else
        None), ``input`` (the input with the largest posterior) and ``max_posterior`` (that posterior,
        maximised over the set; 1.0 for an output that singles out its input).
    """
    W = np.asarray(matrix, dtype=float)
    n, m = W.shape
    xs = list(labels) if labels is not None else list(range(n))
    ys = list(output_labels) if output_labels is not None else list(range(m))
    post = max_posterior(W, uncertainty)
    reach, first = _reach(W)
    best = post.argmax(axis=0)  # (once, not per output: 8 000 outputs at N = 2 000)
    out = []
    for j in np.flatnonzero(reach > 0):
        i = int(best[j])
        single = int(first[j]) if reach[j] == 1 else None
        out.append({"output": _plain_label(ys[j]), "inputs": int(reach[j]),
                    "singles_out": None if single is None else _plain_label(xs[single]),
                    "input": _plain_label(xs[i]), "max_posterior": 1.0 if single is not None else float(post[i, j])})
    return out


def _reach(W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per output: how many inputs reach it, and the first that does (the one, where it singles out an input)."""
    positive = W > 0
    return positive.sum(axis=0), positive.argmax(axis=0)


def singled_out_shares(matrix: np.ndarray) -> np.ndarray:
    """Per input: the share of its records that land on outputs only it produces (``singles_out`` of
    :func:`output_disclosure`, without the posteriors; for ``pipeline.DisclosureWarning``)."""
    W = np.asarray(matrix, dtype=float)
    reach, first = _reach(W)
    single = np.flatnonzero(reach == 1)
    share = np.zeros(W.shape[0])
    np.add.at(share, first[single], W[first[single], single])
    return share


#: A posterior at least this large counts as revealing the input in :func:`disclosure_lines` (outputs other inputs
#: reach with a negligible probability are listed beside those only one input reaches).
NEAR_CERTAIN: float = 0.999999


def disclosure_lines(entries: Sequence[dict], *, limit: int = 12, point_mass: object = None) -> list[str]:
    """Human-readable lines for :func:`output_disclosure`: singled-out outputs first, then the posteriors.

    Implements: the disclosure listing of issue 22 (docs/design.md §10) as text.

    Parameters
    ----------
    entries : sequence of dict
        The entries of :func:`output_disclosure` (keys ``output``, ``singles_out``, ``input``,
        ``max_posterior``).
    limit : int, default 12
        At most this many singled-out outputs and this many posteriors (the largest) are listed.
    point_mass : object, optional
        A category whose point mass lies in the uncertainty set (:func:`contained_point_mass`): under that prior every
        output's posterior of it is 1, whatever the mechanism, so a first line says the listing is uninformative.

    Returns
    -------
    list of str
        A head line on the singled-out outputs and one line per such output (where there is none: the outputs
        whose largest posterior is at least :data:`NEAR_CERTAIN`, or one line saying there is none), then a head
        line and one line per output with the largest posteriors, largest first.
    """
    lines = []
    if point_mass is not None:  # (a new user read 'almost only k00' for every output of a design over such a ball)
        lines.append(f"note: the uncertainty set contains the distribution that is {point_mass!r} with certainty; "
                     "under it every output's posterior of it is 1 whatever the mechanism, so the posteriors below "
                     "say little (more data for the estimate P̂ shrinks the radius)")
    allowed = "ε-PML allows it only for an input whose probability is at least e^-ε throughout the uncertainty set"
    singles = [e for e in entries if e["singles_out"] is not None]
    if singles:
        lines.append(f"disclosure: {len(singles)} of {len(entries)} outputs single out one input (whoever sees "
                     f"the output knows the input; {allowed}):")
        lines += [f"  output {e['output']!r} <- only {e['singles_out']!r}" for e in singles[:limit]]
        if len(singles) > limit:
            lines.append(f"  ... and {len(singles) - limit} more")
    else:
        # reached by others with a probability too small to matter (e.g. an interior-point solution's 1e-10 residue)
        near = [e for e in entries if e["max_posterior"] >= NEAR_CERTAIN]
        if near:
            lines.append(f"disclosure: no output singles out an input exactly, but {len(near)} of {len(entries)} outputs "
                         f"reveal one with a posterior of at least {NEAR_CERTAIN} over the uncertainty set "
                         "(ε-PML allows a posterior near 1 where the input's probability is about e^-ε or more "
                         "somewhere in the uncertainty set):")
            lines += [f"  output {e['output']!r} <- almost only {e['input']!r}" for e in near[:limit]]
            if len(near) > limit:
                lines.append(f"  ... and {len(near) - limit} more")
        else:
            lines.append(f"disclosure: no output singles out an input ({len(entries)} outputs)")
    ranked = sorted(entries, key=lambda e: -e["max_posterior"])
    lines.append("largest posterior P(x | y) over the uncertainty set, per output"
                 + (f" (the {limit} largest of {len(entries)})" if len(entries) > limit else "") + ":")
    lines += [f"  output {e['output']!r}: P({e['input']!r} | output) <= {e['max_posterior']:.4g}" for e in ranked[:limit]]
    return lines


def contained_point_mass(uncertainty: object, labels: Sequence | None = None) -> object:
    """A category whose point mass lies in an ℓ1 ball ``uncertainty`` (the most probable one at the centre), or None.

    Implements: ``‖P̂ − δ_x‖₁ = 2(1 − P̂_x) ≤ β`` (docs/design.md §10): then the ball holds the prior under which x is
    certain, and every output's largest posterior of x is 1.

    Parameters
    ----------
    uncertainty : UncertaintySet
        The design's uncertainty set (only an :class:`~pml_design.uncertainty.L1Ball` can answer).
    labels : sequence, optional
        The category labels (else the index).

    Returns
    -------
    object or None
        The label (or index) of that category.
    """
    center, radius = getattr(uncertainty, "center", None), getattr(uncertainty, "radius", None)
    if center is None or radius is None:
        return None
    x = int(np.argmax(center))
    if 2.0 * (1.0 - float(center[x])) > float(radius):
        return None
    return labels[x] if labels is not None else x
