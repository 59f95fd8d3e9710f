"""Linear designs as sparse LPs (docs/design.md §9): the model and its valid bound (:mod:`.lp_model`), the solve,
polish and certification (:mod:`.lp`), and the LP backends, CPU and GPU (:mod:`.backends`)."""
