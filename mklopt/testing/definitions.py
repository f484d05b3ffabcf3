"""Definitions of the reference instances: the inputs of :func:`~mklopt.testing.build_reference_instances`.

A definition names a dataset shipped with scikit-learn and how to draw the
sample: ``classes`` and ``n_per_class`` (classification, one-class), or ``n``
points (regression); ``seed`` for the draw. Then the kernel specs, ``C``,
``params`` (``p``, ``b``, ``regularizer`` or ``weights``), optionally a
``loss`` (``{"name": ..., "epsilon" | "nu": ...}``; none means the hinge with
``positive_class`` mapped to +1) and ``cross_checks``: other formulations or
backends that must reach the same optimum to
:data:`~mklopt.testing.CROSS_CHECK_TOL`.
"""

from __future__ import annotations

__all__ = ["REFERENCE_DEFINITIONS"]


def _rbf(gamma: float) -> list:
    return ["rbf", {"gamma": gamma}]


def _poly(degree: int, gamma: float, coef0: float = 1.0) -> list:
    return ["poly", {"degree": degree, "gamma": gamma, "coef0": coef0}]


_HINGE: tuple[dict, ...] = (
    {"name": "svm_breast_cancer", "family": "svm, fixed weights",
     "formulation": "svm", "dataset": "breast_cancer", "classes": [0, 1], "positive_class": 1,
     "n_per_class": 30, "seed": 0,
     "kernels": [["linear", {}], _rbf(0.01), _rbf(0.1), _poly(2, 1 / 30)],
     "C": 1.0, "params": {"weights": [0.4, 0.3, 0.2, 0.1]},
     "cross_checks": [{"formulation": "lp_dual",
                       "params": {"regularizer": {"name": "fixed", "weights": [0.4, 0.3, 0.2, 0.1]}}},
                      {"backend": "ECOS", "tol": 1e-9}, {"backend": "HIGHS", "tol": 1e-8},
                      {"backend": "SCS"}]},
    {"name": "l1_iris", "family": "l1-MKL (QCQP)",
     "formulation": "qcqp_l1", "dataset": "iris", "classes": [1, 2], "positive_class": 2,
     "n_per_class": 25, "seed": 1,
     "kernels": [["linear", {}], _rbf(0.1), _rbf(1.0), _poly(3, 0.25)],
     "C": 0.3, "params": {"p": 1.0},
     # lp_dual's weights (multipliers of max_m s_m) come out of Clarabel accurate to
     # ~4e-8 here, so one (weights, alpha) pair certifies at 3e-8: checked at tol 1e-9.
     # The block-norm primal's weights (from the norms of its w_m) likewise: certified at
     # 3.0e-9 on the machine that made the catalogue, at 2.3e-8 on an AMD EPYC (Clarabel 0.11.1,
     # the same objective value to 2e-12, weights 9e-8 apart): checked at tol 1e-9 too.
     "cross_checks": [{"formulation": "lp_dual", "tol": 1e-9}, {"formulation": "lp_primal"},
                      {"formulation": "lp_block_primal", "params": {"b": 1.0}, "tol": 1e-9},
                      {"backend": "ECOS", "tol": 1e-9},
                      {"backend": "SCS"}, {"formulation": "lp_dual", "backend": "SCS"}]},
    {"name": "lp43_wine", "family": "lp-MKL, p = 4/3",
     "formulation": "lp_dual", "dataset": "wine", "classes": [0, 1], "positive_class": 1,
     "n_per_class": 30, "seed": 2,
     "kernels": [["linear", {}], _rbf(0.01), _rbf(0.1), _poly(2, 1 / 13)],
     "C": 0.5, "params": {"p": 4 / 3},
     "cross_checks": [{"formulation": "lp_primal"},
                      {"formulation": "lp_block_primal", "params": {"b": 8 / 7}}, {"backend": "ECOS", "tol": 1e-9},
                      {"backend": "SCS"}]},
    {"name": "lp2_digits", "family": "lp-MKL, p = 2",
     "formulation": "lp_dual", "dataset": "digits", "classes": [3, 8], "positive_class": 8,
     "n_per_class": 35, "seed": 3,
     "kernels": [["linear", {}], _rbf(0.001), _rbf(0.01), _rbf(0.05), _poly(2, 1 / 64)],
     "C": 0.5, "params": {"p": 2.0},
     "cross_checks": [{"formulation": "lp_primal"},
                      {"formulation": "lp_block_primal", "params": {"b": 4 / 3}}, {"backend": "ECOS", "tol": 1e-9},
                      {"backend": "SCS"}]},
    {"name": "block3_breast_cancer", "family": "block norm b = 3 (primal only)",
     "formulation": "lp_block_primal", "dataset": "breast_cancer", "classes": [0, 1],
     "positive_class": 1, "n_per_class": 20, "seed": 4,
     "kernels": [["linear", {}], _rbf(0.03), _poly(2, 1 / 30)],
     "C": 0.3, "params": {"b": 3.0},
     "cross_checks": [{"backend": "ECOS", "tol": 1e-9}, {"backend": "SCS"}]},
    {"name": "enet_wine", "family": "user-defined set: elastic net",
     "formulation": "lp_primal", "dataset": "wine", "classes": [1, 2], "positive_class": 2,
     "n_per_class": 25, "seed": 5,
     "kernels": [["linear", {}], _rbf(0.02), _rbf(0.2), _poly(2, 1 / 13)],
     "C": 0.5, "params": {"regularizer": {"name": "elastic_net", "a": 1.0, "b": 1.0}},
     "cross_checks": [{"backend": "ECOS", "tol": 1e-9}, {"backend": "SCS"}]},
)

_DIABETES_KERNELS = [["linear", {}], _rbf(0.01), _rbf(0.1), _poly(2, 1 / 10)]

#: The losses of the Losses page other than the hinge (labels: standardized targets,
#: class labels, none for one_class).
_LOSSES: tuple[dict, ...] = (
    {"name": "epsilon_lp43_diabetes", "family": "epsilon-insensitive regression, lp-MKL, p = 4/3",
     "formulation": "lp_dual", "dataset": "diabetes", "n": 50, "seed": 6,
     # At p = 1, Clarabel's weights (multipliers of max_m s_m) certify only to
     # 4e-8..1e-6 on diabetes samples with this loss, above CERTIFY_TOL.
     "kernels": _DIABETES_KERNELS, "C": 1.0, "params": {"p": 4 / 3},
     "loss": {"name": "epsilon_insensitive", "epsilon": 0.1},
     "cross_checks": [{"formulation": "lp_primal"}, {"backend": "ECOS", "tol": 1e-9},
                      {"backend": "SCS"}]},
    {"name": "squared_lp2_diabetes", "family": "squared-error regression, lp-MKL, p = 2",
     "formulation": "lp_dual", "dataset": "diabetes", "n": 50, "seed": 7,
     "kernels": _DIABETES_KERNELS, "C": 1.0, "params": {"p": 2.0},
     "loss": {"name": "squared_error"},
     "cross_checks": [{"formulation": "lp_primal"}, {"backend": "ECOS", "tol": 1e-9},
                      {"backend": "SCS"}]},
    {"name": "one_class_l1_wine", "family": "one-class nu-SVM, l1-MKL (QCQP)",
     "formulation": "qcqp_l1", "dataset": "wine", "classes": [0], "n_per_class": 45, "seed": 7,
     "kernels": [["linear", {}], _rbf(0.1), _poly(2, 1 / 13)], "C": 1.0, "params": {"p": 1.0},
     "loss": {"name": "one_class", "nu": 0.3},
     "cross_checks": [{"formulation": "lp_primal"}, {"formulation": "lp_dual"},
                      {"backend": "ECOS", "tol": 1e-9}, {"backend": "SCS"}]},
    {"name": "ovr_lp2_iris", "family": "one-vs-rest multiclass hinge, lp-MKL, p = 2",
     "formulation": "lp_dual", "dataset": "iris", "classes": [0, 1, 2], "n_per_class": 15, "seed": 9,
     "kernels": [["linear", {}], _rbf(0.1), _rbf(1.0), _poly(3, 0.25)], "C": 0.5, "params": {"p": 2.0},
     "loss": {"name": "ovr_hinge"},
     "cross_checks": [{"formulation": "lp_primal"}, {"backend": "ECOS", "tol": 1e-9},
                      {"backend": "SCS"}]},
)

#: Definitions of the reference instances (inputs of
#: :func:`~mklopt.testing.build_reference_instances`), hinge instances first.
REFERENCE_DEFINITIONS: tuple[dict, ...] = _HINGE + _LOSSES
