"""The (ε, δ)-PML statement's numbers say what they mean (pml_design/statements.py)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pml_design.statements import _fmt_delta, pml_statement


def _probabilities(text: str) -> list[float]:
    return [1.0 - float(v) for v in re.findall(r"probability >= 1 - ([0-9.e+-]+)", text)]


def test_delta_near_one_is_not_printed_as_one():
    # 3 digits gave "probability >= 1 - 1": a vacuous-looking statement where the exact one holds w.p. 1e-16
    d = 1.0 - 1e-16
    text = pml_statement(1.0, d, 0.3, 100)
    (prob,) = _probabilities(text)
    assert prob > 0.0 and abs(prob - (1.0 - d)) <= 1e-2 * (1.0 - d)
    assert "1 - 1 " not in text and "1 - 1(" not in text


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=1e-300, max_value=1.0, exclude_max=True))
def test_every_delta_states_its_probability_within_one_percent(d):
    (prob,) = _probabilities(pml_statement(1.0, d, 0.3, 100))
    assert abs(prob - (1.0 - d)) <= 1e-2 * (1.0 - d)


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=0.0, max_value=0.5))
def test_usual_deltas_keep_three_digits(d):
    # statements stored in files written before the rule are re-derived on load: δ ≤ 0.5 must format as before
    assert _fmt_delta(d) == f"{d:.3g}"
