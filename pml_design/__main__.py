"""``python -m pml_design``: the ``pml-design`` command."""

import sys

from .cli import main

sys.exit(main())
