"""Every public function has complete type hints and a numpydoc docstring (project rule): checked module by module.

The modules checked are :data:`CHECKED` (type hints and docstring sections; since 2026-11-26 every module of the
package) and :data:`TYPED_ONLY` (type hints only; none now). A new module joins :data:`CHECKED`; run
:func:`offenders` over :func:`_module_names` to list what a module still lacks.
Every module must still import.

For every checked module under ``pml_design`` (all are found with :func:`pkgutil.walk_packages`) and every plain
function in its ``__all__`` that the module itself defines (``obj.__module__ == module.__name__``; classes and
re-exports are left to the module that defines them):

* every parameter other than ``self``/``cls``, ``*args`` and ``**kwargs`` is annotated, and so is the return;
* the docstring exists; when the function takes parameters it has a ``Parameters`` section (the header line
  followed by a line of dashes), and when its return annotation is not ``None`` a ``Returns`` (or ``Yields``)
  section.

``pml_design.__main__`` is not imported (importing it runs the command line). A module whose import fails (an
optional extra missing) is skipped, not failed: :data:`OPTIONAL` names those allowed to fail (none at present:
every module imports in the test environment), and any other import failure is an error.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import types

import pytest

import pml_design

#: Modules whose public functions are checked in full (hints and docstring sections).
CHECKED: tuple[str, ...] = (
    "pml_design._validation",
    "pml_design.additive.adult",
    "pml_design.additive.common",
    "pml_design.additive.gaussian",
    "pml_design.additive.laplace",
    "pml_design.additive.release",
    "pml_design.bounds",
    "pml_design.cli",
    "pml_design.deploy.file",
    "pml_design.deploy.guard",
    "pml_design.deploy.matrix_text",
    "pml_design.deploy.output",
    "pml_design.deploy.streaming",
    "pml_design.design.anytime",
    "pml_design.design.certify",
    "pml_design.design.disclosure",
    "pml_design.design.estimation.affordable",
    "pml_design.design.estimation.api",
    "pml_design.design.estimation.bound",
    "pml_design.design.estimation.bound_cells",
    "pml_design.design.estimation.cell_lp",
    "pml_design.design.estimation.coordinate_bound",
    "pml_design.design.estimation.incumbent",
    "pml_design.design.estimation.master",
    "pml_design.design.estimation.mixture",
    "pml_design.design.estimation.moment_bound",
    "pml_design.design.estimation.parallel_bound",
    "pml_design.design.estimation.pricing",
    "pml_design.design.estimation.rank_one",
    "pml_design.design.estimation.reduce",
    "pml_design.design.estimation.rounds",
    "pml_design.design.estimation.seeds",
    "pml_design.design.exact",
    "pml_design.design.linear.backends",
    "pml_design.design.linear.lp",
    "pml_design.design.polytope",
    "pml_design.design.quiet",
    "pml_design.design.rays",
    "pml_design.design.result",
    "pml_design.design.scalable.api",
    "pml_design.design.scalable.ball",
    "pml_design.design.scalable.ball_column_bound",
    "pml_design.design.scalable.ball_pricing",
    "pml_design.design.scalable.branch_bound",
    "pml_design.design.scalable.cone",
    "pml_design.design.scalable.master",
    "pml_design.design.scalable.pricing",
    "pml_design.design.utilities",
    "pml_design.estimation",
    "pml_design.flexible.accounting",
    "pml_design.flexible.baselines",
    "pml_design.flexible.boolean",
    "pml_design.flexible.distances",
    "pml_design.flexible.mechanisms",
    "pml_design.flexible.noise",
    "pml_design.flexible.pld",
    "pml_design.flexible.statistics",
    "pml_design.histogram.release",
    "pml_design.leakage",
    "pml_design.mechanisms.closed_form",
    "pml_design.mechanisms.fit",
    "pml_design.mechanisms.frequency_oracles.cyclotomic",
    "pml_design.mechanisms.frequency_oracles.fisher",
    "pml_design.mechanisms.frequency_oracles.hadamard",
    "pml_design.mechanisms.frequency_oracles.optimum",
    "pml_design.mechanisms.labels",
    "pml_design.mechanisms.ldp",
    "pml_design.mechanisms.mechanism",
    "pml_design.pipeline",
    "pml_design.priors",
    "pml_design.statements",
    "pml_design.uncertainty",
)
#: Modules whose public functions are checked for type hints only.
TYPED_ONLY: tuple[str, ...] = ()

#: Modules whose import may need an optional extra; they are skipped (with a reason) when their import fails.
OPTIONAL: frozenset[str] = frozenset()

_SKIP_PARAMS = {"self", "cls"}
_VARIADIC = {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}


def _module_names() -> list[str]:
    names = [pml_design.__name__]
    names += [m.name for m in pkgutil.walk_packages(pml_design.__path__, prefix="pml_design.")]
    # ``__main__`` runs the command line when imported (``sys.exit(main())``) and defines no function
    return sorted(n for n in set(names) if n.rsplit(".", 1)[-1] != "__main__")


def _has_section(doc: str, *titles: str) -> bool:
    lines = [line.strip() for line in doc.splitlines()]
    return any(
        a in titles and re.fullmatch(r"-{3,}", b) is not None for a, b in zip(lines, lines[1:])
    )


def _is_none(annotation: object) -> bool:
    return annotation is None or annotation is type(None) or annotation == "None"


def _problems(func: types.FunctionType, *, sections: bool = True) -> list[str]:
    out: list[str] = []
    sig = inspect.signature(func)
    params = [p for p in sig.parameters.values() if p.name not in _SKIP_PARAMS]
    missing = [p.name for p in params if p.kind not in _VARIADIC and p.annotation is inspect.Parameter.empty]
    if missing:
        out.append(f"parameters without annotation: {', '.join(missing)}")
    if sig.return_annotation is inspect.Signature.empty:
        out.append("return not annotated")
    if not sections:
        return out
    doc = inspect.getdoc(func)
    if not doc:
        out.append("no docstring")
        return out
    if params and not _has_section(doc, "Parameters"):
        out.append("no 'Parameters' section")
    if not _is_none(sig.return_annotation) and not _has_section(doc, "Returns", "Yields"):
        out.append("no 'Returns'/'Yields' section")
    return out


def _public_functions(module: types.ModuleType) -> list[tuple[str, types.FunctionType]]:
    out = []
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name, None)
        if inspect.isfunction(obj) and obj.__module__ == module.__name__:
            out.append((name, obj))
    return out


def _import(module_name: str) -> types.ModuleType:
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        if module_name in OPTIONAL:
            pytest.skip(f"{module_name} needs an optional extra: {exc}")
        raise


def offenders(module_name: str, *, sections: bool = True) -> list[str]:
    """``"module.function: problem"`` for every offending public function of a module (empty when it complies)."""
    module = _import(module_name)
    return [f"{module_name}.{name}: {problem}" for name, func in _public_functions(module)
            for problem in _problems(func, sections=sections)]


def test_every_module_is_clean() -> None:
    """Every module of the package, listed in CHECKED or not (a new module, a new public function), complies."""
    allp = [p for m in _module_names() for p in offenders(m)]
    assert not allp, "\n".join(allp)


@pytest.mark.parametrize("module_name", _module_names())
def test_every_module_imports(module_name: str) -> None:
    _import(module_name)


def test_checked_modules_exist() -> None:
    assert set(CHECKED) | set(TYPED_ONLY) <= set(_module_names())


@pytest.mark.parametrize("module_name", CHECKED)
def test_public_functions_are_typed_and_documented(module_name: str) -> None:
    problems = offenders(module_name)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("module_name", TYPED_ONLY)
def test_public_functions_are_typed(module_name: str) -> None:
    problems = offenders(module_name, sections=False)
    assert not problems, "\n".join(problems)
