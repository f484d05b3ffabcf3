"""Reference instances of the losses other than the hinge (DESIGN §11) in ``mklopt.testing``.

* each loss instance carries its loss into the solver's parameters, builds the
  labels its loss takes and re-certifies its stored candidate;
* ``mklopt.solve`` on the instance's formulation reproduces the stored optimum;
* ``check_solver`` passes an mklopt-based solver on every instance and fails
  solvers that ignore the loss.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import mklopt
from mklopt.testing import (CERTIFY_TOL, REFERENCE_DEFINITIONS, ReferenceInstance, check_solver,
                            reference_instances)

LOSS_NAMES = [d["name"] for d in REFERENCE_DEFINITIONS if "loss" in d]
REGRESSION = [d["name"] for d in REFERENCE_DEFINITIONS
              if d.get("loss", {}).get("name") in ("epsilon_insensitive", "squared_error")]
LOSS_KEYS = ("loss", "epsilon", "nu")


def scale(value: float) -> float:
    return max(1.0, abs(value))


@pytest.fixture(scope="module")
def instances() -> dict[str, ReferenceInstance]:
    return {inst.name: inst for inst in reference_instances()}


def mklopt_solver(kernels, y, C, **params):
    """A correct custom solver: ``mklopt.solve`` with lp_primal (svm / lp_block_primal for
    instances with fixed weights / a block norm, which lp_primal does not take)."""
    formulation = ("svm" if "weights" in params else
                   "lp_block_primal" if "b" in params else "lp_primal")
    res = mklopt.solve(kernels, y, formulation, C=C, **params)
    return res.weights, res.alpha


def loss_blind_solver(kernels, y, C, **params):
    """A hinge-only solver: drops ``loss=`` and its parameter."""
    params = {k: v for k, v in params.items() if k not in LOSS_KEYS}
    return mklopt_solver(kernels, y, C, **params)


def test_every_loss_has_an_instance(instances):
    losses = {inst.loss for inst in instances.values()}
    assert losses == {"hinge", "epsilon_insensitive", "squared_error", "one_class", "ovr_hinge"}


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_loss_instance_carries_its_loss_into_the_parameters(instances, name):
    inst = instances[name]
    spec = inst.definition["loss"]
    assert inst.loss == spec["name"] == inst.params["loss"]
    assert inst.loss_params == {k: v for k, v in spec.items() if k != "name"}
    assert {k: inst.params[k] for k in inst.loss_params} == inst.loss_params
    assert 40 <= inst.kernels.n <= 60 and 3 <= inst.kernels.M <= 4


def test_hinge_instances_keep_their_parameters(instances):
    for inst in instances.values():
        if inst.loss == "hinge":
            assert "loss" not in inst.definition and not set(LOSS_KEYS) & set(inst.params)
            assert set(np.unique(inst.y)) == {-1.0, 1.0}


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_labels_are_those_the_loss_takes(instances, name):
    inst = instances[name]
    n = inst.kernels.n
    if inst.loss == "one_class":
        assert inst.y is None and inst.C == 1.0
    elif inst.loss == "ovr_hinge":
        classes = inst.definition["classes"]
        assert set(np.unique(inst.y)) == set(classes) and len(classes) >= 3
        assert inst.alpha.shape == (len(classes), n) and np.shape(inst.bias) == (len(classes),)
    else:  # regression: the sample's targets, standardized
        assert inst.y.shape == (n,) and np.unique(inst.y).size > n // 2
        assert abs(inst.y.mean()) < 1e-12 and abs(inst.y.std() - 1.0) < 1e-12


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_stored_candidate_recertifies_to_its_stored_gap(instances, name):
    inst = instances[name]
    cert = inst.certify(inst.weights, inst.alpha)
    assert cert.feasible and cert.rel_gap <= CERTIFY_TOL
    assert cert.rel_gap <= inst.rel_gap + 1e-12
    assert abs(cert.primal - inst.optimal_value) <= 1e-12 * scale(inst.optimal_value)
    assert abs(cert.dual - inst.dual_value) <= 1e-12 * scale(inst.optimal_value)


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_stored_cross_checks_cover_a_formulation_and_a_backend(instances, name):
    record = instances[name].definition
    checks = record["cross_checks"]
    assert all(c["agrees"] for c in checks)
    assert any(c["formulation"] != record["formulation"] for c in checks)
    assert any(c["backend"] == "ECOS" for c in checks)


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_solve_reproduces_the_optimal_value(instances, name):
    inst = instances[name]
    res = inst.solve()
    assert res.status == "optimal", res.message
    assert abs(res.primal - inst.optimal_value) <= 1e-6 * abs(inst.optimal_value)


def test_check_solver_passes_an_mklopt_solver_on_every_instance(instances):
    report = check_solver(mklopt_solver, list(instances.values()))
    assert report.passed, str(report)
    assert {c.name for c in report} == set(instances)


def test_check_solver_fails_exactly_the_loss_instances_for_a_loss_blind_solver(instances):
    report = check_solver(loss_blind_solver, list(instances.values()))
    assert {c.name for c in report.failures} == set(LOSS_NAMES)
    for check in report.failures:
        assert "solver raised" in check.message


@pytest.mark.parametrize("name", REGRESSION)
def test_check_solver_fails_hinge_answers_on_a_regression_instance(instances, name):
    inst = instances[name]

    def hinge_on_signs(kernels, y, C, **params):
        params = {k: v for k, v in params.items() if k not in LOSS_KEYS}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            res = mklopt.solve(kernels, np.where(y > 0, 1.0, -1.0), inst.formulation, C=C, **params)
        return res.weights, res.alpha

    check = check_solver(hinge_on_signs, [inst])[name]
    assert not check.passed
    assert check.rel_gap > 1e-3 and "rel_gap" in check.message


def test_check_solver_rejects_infeasible_weights_even_when_the_gap_looks_closed(instances):
    inst = instances["squared_lp2_diabetes"]

    def scaled(kernels, y, C, **params):
        weights, alpha = mklopt_solver(kernels, y, C, **params)
        return weights * (1 + 1e-7), alpha

    check = check_solver(scaled, [inst])[inst.name]
    assert not check.passed and "not certified" in check.message
    assert abs(check.error) <= 1e-6  # the value alone would pass
