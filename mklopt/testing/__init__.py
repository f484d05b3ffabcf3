"""Reference instances with certified solutions, and a conformance check for custom solvers.

The catalogue folder (top-level ``formulations/``, shipped in a wheel as
``mklopt._catalogue``) holds ``reference_instances.json``: small, seeded MKL
problems built from datasets shipped with scikit-learn, each with a certified
optimum (weights, alpha, bias, primal and dual value, relative gap at most
:data:`CERTIFY_TOL` by mklopt's own certificate) and cross-checks against a
second formulation and other backends. Instances cover the hinge loss and the
other losses of the Losses page (ε-insensitive and squared-error regression,
one-class, one-vs-rest multiclass); a record without a ``loss`` entry is a
hinge instance.

* :func:`reference_instances` rebuilds the kernels and labels deterministically
  and returns :class:`ReferenceInstance` objects (:mod:`.catalogue`, :mod:`.data`).
* :func:`check_solver` runs a user's solver on them and certifies every
  candidate with :func:`mklopt.certify` (:mod:`.check`).
* :func:`build_reference_instances` regenerates the JSON document from
  :data:`REFERENCE_DEFINITIONS` (:mod:`.generate`, :mod:`.definitions`;
  ``examples/make_reference_instances.py`` writes it).

Throughout, **p is the weight norm** (:math:`\\|\\mu\\|_p \\le 1`) and ``b`` the
thesis' block norm (:math:`\\|w\\|_{2,b}`); :math:`b = 2p/(p+1)`.

Examples
--------
>>> import mklopt
>>> from mklopt.testing import reference_instances, check_solver
>>> inst = reference_instances()[0]
>>> def my_solver(kernels, y, C, **params):
...     res = mklopt.solve(kernels, y, inst.formulation, C=C, **params)
...     return res.weights, res.alpha
>>> print(check_solver(my_solver, [inst]))  # doctest: +SKIP
"""

from __future__ import annotations

from .catalogue import (CATALOGUE_FILE, ReferenceInstance, catalogue_path, certificate_regularizer,
                        decode_params, instance_from_record, load_catalogue, reference_instances,
                        solver_params)
from .check import InstanceCheck, SolverReport, check_solver
from .data import build_kernels, build_labels, draw_indices, draw_sample, standardize
from .definitions import REFERENCE_DEFINITIONS
from .generate import (CERTIFY_TOL, CROSS_CHECK_TOL, REFERENCE_SOLVER_TOL, build_instance,
                       build_reference_instances, dumps_catalogue)

__all__ = [
    "ReferenceInstance", "reference_instances", "load_catalogue", "catalogue_path",
    "check_solver", "SolverReport", "InstanceCheck", "build_reference_instances",
    "dumps_catalogue", "REFERENCE_DEFINITIONS", "CERTIFY_TOL", "CROSS_CHECK_TOL",
]
