"""Flexible accuracy for DP histograms (Bansal, Chunduru, Data, Prabhakaran, AISTATS 2022).

Module map
----------
noise        shifted-truncated Laplace π_q: density, CDF, exact sampler (Sec. 5.1, Alg. 1)
boolean      "is the set empty?" mechanism, eq. (9), Pareto frontier + LP check (Sec. 5.1)
mechanisms   STLap (Alg. 1), bucketing (Alg. 2, 4), BucketHist (Alg. 3, 5)
release      the release objects: what may be published (``publishable()``), what is private accounting
accounting   paper formulas (Thm 3, Lemmas 9-10, Cor. 1, Thm 4) and proven bounds for what runs
pld          exact δ(ε) of STLap for concrete neighbouring inputs (privacy-loss distributions)
distances    W^∞_γ (Def. 1), W_θ (Def. 7), ∂_drop, ∂_move, ∂^η_drmv, d_hist, d_supp, accuracy checks
statistics   histogram-based statistics (Sec. 5.2), M_f (eq. 10), Thm 5/6 checks, flexible error
baselines    Sec. 6 / App. L.2 baselines (exponential, PTR, smooth sensitivity, stability, choosing)
"""

from __future__ import annotations

from pml_design.flexible.accounting import *  # noqa: F401,F403
from pml_design.flexible.accounting import __all__ as _acc
from pml_design.flexible.boolean import *  # noqa: F401,F403
from pml_design.flexible.boolean import __all__ as _bool
from pml_design.flexible.mechanisms import *  # noqa: F401,F403
from pml_design.flexible.mechanisms import __all__ as _mech
from pml_design.flexible.noise import *  # noqa: F401,F403
from pml_design.flexible.noise import __all__ as _noise
from pml_design.flexible.pld import *  # noqa: F401,F403
from pml_design.flexible.pld import __all__ as _pld
from pml_design.flexible.distances import *  # noqa: F401,F403
from pml_design.flexible.distances import __all__ as _dist
from pml_design.flexible.statistics import *  # noqa: F401,F403
from pml_design.flexible.statistics import __all__ as _stat
from pml_design.flexible.baselines import *  # noqa: F401,F403
from pml_design.flexible.baselines import __all__ as _base

__all__ = [*_acc, *_bool, *_mech, *_noise, *_pld, *_dist, *_stat, *_base]
