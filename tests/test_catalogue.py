"""The formulation catalogue (top-level ``formulations/``) and ``mklopt.testing``.

* the pages are one-to-one with ``mklopt.formulations.FORMULATIONS`` and the
  README index lists exactly the registered formulations (compared as sets,
  so formulations registered later only need their page and index row);
* every certified reference instance re-solves to its stored optimum on every
  installed capable backend, within that backend's certified accuracy;
* the JSON is in sync with ``REFERENCE_DEFINITIONS`` (regenerated here);
* ``check_solver`` passes a correct solver and flags wrong ones.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import mklopt
from mklopt import backends as bk
from mklopt.api import gap_tolerance
from mklopt.exceptions import InvalidInputError
from mklopt.formulations import FORMULATIONS
from mklopt.losses import LOSSES
from mklopt.testing import (CERTIFY_TOL, CROSS_CHECK_TOL, REFERENCE_DEFINITIONS, ReferenceInstance,
                            build_instance, catalogue_path, check_solver, reference_instances)

CATALOGUE = Path(__file__).resolve().parent.parent / "formulations"
RECORDS = json.loads((CATALOGUE / "reference_instances.json").read_text(encoding="utf-8"))["instances"]
SOLVE_TOL = 1e-8  # mklopt.solve's default backend tolerance
#: Sections every catalogue page has (DESIGN §2: primal, dual, optimality, gap, source).
REQUIRED_SECTIONS = ("## Primal", "## Dual", "## Optimality", "## Duality gap", "## Source")
SEED_FILE = re.compile(r"00\d_[0-9a-f]{16}\.txt")
#: Titles of the source papers, as the pages cite them.
SEED_TITLES = ("Learning Kernels Using Local Rademacher Complexity", "*Learning Kernels*",
               "ℓp-Norm Multiple Kernel Learning", "Voted Kernel Regularization")


def scale(value: float) -> float:
    return max(1.0, abs(value))


@pytest.fixture(scope="module")
def instances() -> dict[str, ReferenceInstance]:
    return {inst.name: inst for inst in reference_instances()}


# ------------------------------------------------------------------ pages and index
#: Pages of the losses (one per registered loss, and their overview), not formulations.
LOSS_PAGES = {*LOSSES, "losses"}


#: Pages of algorithms that are not formulations: a driver of ``mklopt.fit`` and the
#: weight methods of ``mklopt.learn_weights`` (checked by their own tests below).
METHOD_PAGES = {"simplemkl": "driver", "chunking": "driver", "alignment": "weights",
                "peer_methods": "weights"}
METHOD_PAGES["polynomial_krr"] = "driver"
METHOD_PAGES.update(newton="driver", mirror_descent="driver")
#: Sections of a method page: its problem, optimality, what mklopt certifies, sources.
METHOD_SECTIONS = ("## Primal", "## Optimality", "## Duality gap", "## Source")


def catalogue_pages() -> set[str]:
    return ({p.stem for p in CATALOGUE.glob("*.md") if p.name != "README.md"} - LOSS_PAGES
            - set(METHOD_PAGES))


def readme_index() -> dict[str, tuple[str, str]]:
    """Rows ``| [`name`](page) | meaning | cone |`` of the README table: name -> (page, cone)."""
    rows = {}
    row = re.compile(r"^\|\s*\[`?([\w]+)`?\]\(([\w.]+)\)\s*\|(.*)\|\s*`?(\w+)`?\s*\|\s*$")
    for line in (CATALOGUE / "README.md").read_text(encoding="utf-8").splitlines():
        match = row.match(line)
        if match:
            rows[match.group(1)] = (match.group(2), match.group(4))
    return rows


def test_every_registered_formulation_has_a_page_and_every_page_a_formulation():
    assert catalogue_pages() == set(FORMULATIONS)


@pytest.mark.parametrize("name", sorted(FORMULATIONS))
def test_formulation_page_attribute_names_its_page(name):
    page = FORMULATIONS[name].page or f"{name}.md"
    assert page == f"{name}.md" and (CATALOGUE / page).is_file()


def test_readme_index_lists_exactly_the_registered_formulations():
    index = readme_index()
    assert set(index) == set(FORMULATIONS)
    for name, (page, cone) in index.items():
        assert page == f"{name}.md"
        assert cone == FORMULATIONS[name].cone


@pytest.mark.parametrize("page", sorted(catalogue_pages()))
def test_page_has_the_catalogue_sections_and_cites_a_seed(page):
    """Sections present; a source paper cited by title and authors, never by internal file name."""
    text = (CATALOGUE / f"{page}.md").read_text(encoding="utf-8")
    missing = [s for s in REQUIRED_SECTIONS if s not in text]
    assert not missing, f"{page}.md lacks sections {missing}"
    assert any(title in text for title in SEED_TITLES), f"{page}.md cites no source paper by title"
    assert not SEED_FILE.search(text), f"{page}.md cites a paper by internal file name"


@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_every_loss_has_a_page_with_its_math(loss):
    """A loss page states primal, dual, optimality, the offset rule, the gap and its sources
    (cited by title and authors)."""
    text = (CATALOGUE / f"{loss}.md").read_text(encoding="utf-8")
    missing = [s for s in (*REQUIRED_SECTIONS, "## Best offset") if s not in text]
    assert not missing, f"{loss}.md lacks sections {missing}"
    assert not SEED_FILE.search(text), f"{loss}.md cites a paper by internal file name"
    assert loss in (CATALOGUE / "losses.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", sorted(METHOD_PAGES))
def test_method_pages_have_their_sections_index_row_and_entry_point(page):
    """A driver/weight-method page states the problem, optimality and certificate, cites its
    papers by title, is indexed in the README and names something mklopt really registers."""
    from mklopt.drivers import DRIVERS
    from mklopt.weight_methods import METHODS

    text = (CATALOGUE / f"{page}.md").read_text(encoding="utf-8")
    missing = [s for s in METHOD_SECTIONS if s not in text]
    assert not missing, f"{page}.md lacks sections {missing}"
    source = text.split("## Source", 1)[1]
    assert "*" in source and re.search(r"(19|20)\d\d", source)  # title, venue and year
    assert f"[`{page}`]({page}.md)" in (CATALOGUE / "README.md").read_text(encoding="utf-8")
    names = ([page] if METHOD_PAGES[page] == "driver"
             else [name for name, method in METHODS.items() if method.page == f"{page}.md"])
    assert names
    registered = DRIVERS if METHOD_PAGES[page] == "driver" else METHODS
    assert all(name in registered and f'"{name}"' in text for name in names)


# ------------------------------------------------------------------ instance set
def test_catalogue_file_is_found_by_the_locator():
    path = catalogue_path()
    assert path.read_bytes() == (CATALOGUE / "reference_instances.json").read_bytes()


def test_instances_cover_every_family_and_stay_small(instances):
    params = [inst.params for inst in instances.values()]
    assert {inst.formulation for inst in instances.values()} <= set(FORMULATIONS)
    assert any("weights" in p for p in params)                      # svm on fixed weights
    assert any(p.get("p") == 1 for p in params)                      # l1
    assert {4 / 3, 2.0} <= {p.get("p") for p in params}              # lp
    assert any(p.get("b", 0) > 2 for p in params)                    # block norm b > 2
    assert any(isinstance(p.get("regularizer"), mklopt.Regularizer) for p in params)
    for inst in instances.values():
        assert 30 <= inst.kernels.n <= 80 and 3 <= inst.kernels.M <= 5
        target = inst.definition["normalization"]["target"]
        np.testing.assert_allclose(inst.kernels.traces, target, rtol=1e-12)
        if inst.loss == "hinge":  # other losses: tests/test_testing_catalogue_losses.py
            assert set(np.unique(inst.y)) == {-1.0, 1.0}


@pytest.mark.parametrize("name", [r["name"] for r in RECORDS])
def test_stored_candidate_is_certified_here(instances, name):
    inst = instances[name]
    cert = inst.certify(inst.weights, inst.alpha)
    assert cert.rel_gap <= CERTIFY_TOL
    assert abs(cert.primal - inst.optimal_value) <= CERTIFY_TOL * scale(inst.optimal_value)
    assert cert.dual <= inst.optimal_value + 1e-12 * scale(inst.optimal_value)


@pytest.mark.parametrize("record", RECORDS, ids=[r["name"] for r in RECORDS])
def test_stored_cross_checks_agree(record):
    assert record["cross_checks"], "every instance is cross-checked"
    for check in record["cross_checks"]:
        assert check["agrees"] and check["status"] == "optimal"
        assert abs(check["difference"]) <= CROSS_CHECK_TOL


@pytest.mark.parametrize("definition", REFERENCE_DEFINITIONS, ids=[d["name"] for d in REFERENCE_DEFINITIONS])
def test_json_is_in_sync_with_the_definitions(definition):
    stored = {r["name"]: r for r in RECORDS}[definition["name"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        fresh = build_instance(definition)
    for key in ("formulation", "dataset", "sample", "kernels", "normalization", "C", "params"):
        assert fresh[key] == stored[key], key
    opt = stored["certified"]["optimal_value"]
    assert abs(fresh["certified"]["optimal_value"] - opt) <= CERTIFY_TOL * scale(opt)


# ------------------------------------------------------------------ every backend
def backend_cases() -> list[tuple[str, str]]:
    return [(r["name"], name) for r in RECORDS
            for name in bk.capable_backends(FORMULATIONS[r["formulation"]].cone)]


@pytest.mark.parametrize("name,backend", backend_cases())
def test_reference_instance_resolves_on_every_capable_backend(instances, name, backend):
    inst = instances[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # CVXPY's "may be inaccurate" notes
        res = inst.solve(backend=backend, tol=SOLVE_TOL)
    assert res.status == "optimal", res.message
    limit = gap_tolerance(backend, SOLVE_TOL) * scale(inst.optimal_value)
    assert abs(res.primal - inst.optimal_value) <= limit
    assert abs(res.info["backend_value"] - inst.optimal_value) <= limit
    # weak duality between the two certificates (up to rounding)
    assert res.dual <= inst.optimal_value + 1e-12 * scale(inst.optimal_value)
    assert inst.dual_value <= res.primal + 1e-12 * scale(inst.optimal_value)


# ------------------------------------------------------------------ check_solver
def exact_solver(kernels, y, C, **params):
    """A correct 'custom' solver: mklopt.solve with the formulation the parameters call for.

    Tight backend tolerance: the (weights, alpha) pair is certified on its own,
    without the tighter dual bound ``mklopt.solve`` may keep from a second alpha.
    """
    if "weights" in params:
        formulation = "svm"
    elif "b" in params:
        formulation = "lp_block_primal"
    elif "regularizer" in params:
        formulation = "lp_primal"
    else:
        formulation = "lp_dual"
    res = mklopt.solve(kernels, y, formulation, C=C, tol=1e-10, **params)
    return res.weights, res.alpha


def uniform_zero_solver(kernels, y, C, **params):
    return np.ones(kernels.M), np.zeros(kernels.n)


def test_check_solver_passes_a_correct_solver(instances):
    report = check_solver(exact_solver, list(instances.values()))
    assert report.passed, str(report)
    assert len(report) == len(instances)
    text = str(report)
    assert all(name in text for name in instances) and "FAIL" not in text


def test_check_solver_flags_a_wrong_solver(instances):
    report = check_solver(uniform_zero_solver, list(instances.values()))
    assert not report.passed and len(report.failures) == len(instances)
    for check in report:
        if check.loss == "hinge":  # others fail too (invalid alpha shape, weights outside Θ)
            assert check.rel_gap > report.tol and check.error > report.tol
    assert str(report).count("FAIL") == len(instances)


def test_check_solver_reports_a_crashing_or_malformed_solver(instances):
    inst = next(iter(instances.values()))

    def crashing(kernels, y, C, **params):
        raise RuntimeError("diverged")

    def short_alpha(kernels, y, C, **params):
        return np.ones(kernels.M), np.zeros(kernels.n - 1)

    report = check_solver(crashing, [inst])
    assert not report.passed and "diverged" in report[inst.name].message
    report = check_solver(short_alpha, [inst])
    assert not report.passed and "invalid candidate" in report[inst.name].message


def test_check_solver_accepts_instance_names(instances):
    name = RECORDS[0]["name"]
    report = check_solver(exact_solver, [name])
    assert [c.name for c in report] == [name] and report.passed


@pytest.mark.parametrize("kwargs", [{"fn": 3}, {"tol": 0.0}, {"tol": float("nan")},
                                    {"instances": ["no_such_instance"]}, {"instances": [42]}])
def test_check_solver_rejects_bad_input(kwargs):
    args = {"fn": exact_solver, **kwargs}
    with pytest.raises(InvalidInputError):
        check_solver(**args)
