"""Deprecated path of :mod:`pml_design.deploy.dataframe` (a thin re-export); removed in the next release.

Import from ``pml_design.deploy.dataframe`` (or the flat ``pml_design``) instead; see ``docs/architecture.md``.
"""

from . import _warn_moved
from .deploy.dataframe import *  # noqa: F401,F403
from .deploy.dataframe import __all__  # noqa: F401

_warn_moved(__name__, "pml_design.deploy.dataframe")
