"""Deprecated path of :mod:`pml_design.deploy.streaming` (a thin re-export); removed in the next release.

Import from ``pml_design.deploy.streaming`` (or the flat ``pml_design``) instead; see ``docs/architecture.md``.
"""

from . import _warn_moved
from .deploy.streaming import *  # noqa: F401,F403
from .deploy.streaming import __all__  # noqa: F401

_warn_moved(__name__, "pml_design.deploy.streaming")
