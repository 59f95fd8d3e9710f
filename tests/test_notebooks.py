"""Execute every notebook of notebooks/ headless (as nbmake does) and check they are stored without outputs.

The notebooks use small sizes (``SMALL = True``) so each runs in a few seconds. Equivalent to
``pytest --nbmake notebooks/``; this file makes the plain test command run them too.
"""

from __future__ import annotations

import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

nbformat = pytest.importorskip("nbformat")


def test_there_are_notebooks():
    names = [p.stem for p in NOTEBOOKS]
    assert len(names) >= 4
    assert any("design_from_samples" in n for n in names)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name}: clear outputs before committing"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes(path, monkeypatch):
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(path, as_version=4)
    # the kernel inherits the environment: no progress bars, the checkout on the path; plots use the
    # inline backend (Agg rendering into PNG outputs), so no display is needed
    monkeypatch.delenv("MPLBACKEND", raising=False)
    monkeypatch.setenv("PML_DESIGN_NO_PROGRESS", "1")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "display_data" and "image/png" in o.get("data", {})]
    n_show = sum(c.source.count("plt.show()") for c in nb.cells if c.cell_type == "code")
    assert len(images) == n_show >= 1  # every figure was rendered
