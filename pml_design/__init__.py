"""pml_design: privacy mechanism design with context-aware guarantees.

Flat public API (re-exports only); see the README's API overview for the module map.
"""

from __future__ import annotations

__version__ = "0.1.0"
