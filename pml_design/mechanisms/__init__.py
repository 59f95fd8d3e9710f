"""Usable mechanisms: the :class:`Mechanism` object, closed forms, and LDP baselines."""

from .mechanism import Mechanism, project_to_simplex

__all__ = ["Mechanism", "project_to_simplex"]
