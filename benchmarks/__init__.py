"""Benchmarks and figure scripts of pml_design (source checkout only; not installed with the package).

Every ``fig_*.py``, ``bench_*.py`` and ``example_*.py`` module defines
``run(quick: bool = False, outdir=...) -> dict`` and a command line with ``--quick`` and ``--outdir``.
``python -m benchmarks`` (or ``pml-design bench``) runs them all within a time budget and writes
``benchmarks/results/summary.json`` and ``summary.md``; ``pml-design reproduce FIGURE`` runs one.
"""
