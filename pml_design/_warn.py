"""Where a library warning points: the first frame outside ``pml_design`` (the user's line).

Implements: the warning convention of the developers' guide (warnings go to stderr and name the caller's line); no
paper result.
"""

from __future__ import annotations

import os
import sys

__all__ = ["outside_stacklevel"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def outside_stacklevel() -> int:
    """The ``stacklevel`` that makes a ``warnings.warn`` in the caller point at the first frame outside ``pml_design``.

    Whichever entry point (``design``, ``design_from_samples``, ``Mechanism.estimate``, …) led to the warning, the user
    sees their own line (a new user's trial: the gap warning pointed at ``pipeline.py``).

    Implements: the warning convention of the module docstring.

    Returns
    -------
    int
        1 for the caller itself, 2 for its caller, and so on, up to the first frame outside the package.
    """
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level
