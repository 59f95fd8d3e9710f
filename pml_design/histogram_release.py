"""Deprecated path of :mod:`pml_design.histogram.release` (a thin re-export); removed in the next release.

Import from ``pml_design.histogram.release`` (or the flat ``pml_design``) instead; see ``docs/architecture.md``.
"""

from . import _warn_moved
from .histogram.release import *  # noqa: F401,F403
from .histogram.release import __all__  # noqa: F401

_warn_moved(__name__, "pml_design.histogram.release")
