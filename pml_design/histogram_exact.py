"""Deprecated path of :mod:`pml_design.histogram.exact` (a thin re-export); removed in the next release.

Import from ``pml_design.histogram.exact`` (or the flat ``pml_design``) instead; see ``docs/architecture.md``.
"""

from . import _warn_moved
from .histogram.exact import *  # noqa: F401,F403
from .histogram.exact import __all__  # noqa: F401
from .histogram.exact import MAX_CONFIGURATIONS  # noqa: F401

_warn_moved(__name__, "pml_design.histogram.exact")
