"""Deprecated path of :mod:`pml_design.additive.gaussian` (a thin re-export); removed in the next release.

Import from ``pml_design.additive.gaussian`` (or the flat ``pml_design``) instead; see ``docs/architecture.md``.
"""

from . import _warn_moved
from .additive.gaussian import *  # noqa: F401,F403
from .additive.gaussian import __all__  # noqa: F401

_warn_moved(__name__, "pml_design.additive.gaussian")
