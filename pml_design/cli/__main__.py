"""``python -m pml_design.cli``: the ``pml-design`` command."""

import sys

from . import main

sys.exit(main())
