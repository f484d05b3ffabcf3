"""mklopt: a convex-modeling suite for Multiple Kernel Learning.

Every formulation is declarative CVXPY solved by pluggable backends, and every
result carries mklopt's own duality-gap certificate. **p is the weight norm**
(:math:`\\|\\mu\\|_p \\le 1`) everywhere.
"""

import os as _os

# The compiled loops' OpenMP threads wait passively at barriers (set before numba starts its
# threading layer): with another busy process, spinning threads made 2 threads slower than 1.
# Set OMP_WAIT_POLICY yourself before importing mklopt to choose otherwise.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import importlib as _importlib
import importlib.abc as _abc
import importlib.util as _util
import sys as _sys
import warnings as _warnings

from ._version import __version__

#: The public names and the subpackage each comes from, imported on first use (PEP 562): ``import
#: mklopt`` and ``mklopt --help`` take a fraction of a second, not the seconds CVXPY, SciPy and
#: scikit-learn take to import; the first fit pays them, as it would anyway.
PUBLIC = {
    **dict.fromkeys(["fit", "solve"], "api"), "available_backends": "backends",
    **dict.fromkeys(["certify", "Certificate"], "certificates"), "path": "model_selection",
    **dict.fromkeys(["MKLClassifier", "MKLOneClass", "MKLRegressor", "VKRClassifier"], "estimators"),
    **dict.fromkeys(["BackendError", "InvalidInputError", "KernelError", "MKLError", "NotPSDError",
                     "SolverError"], "exceptions"),
    **dict.fromkeys(["KernelSet", "ViewKernel", "kernel_stack", "views"], "kernels"), "Loss": "losses",
    **dict.fromkeys(["L1", "BlockNorm", "ConstraintSet", "ElasticNet", "Fixed", "GroupSimplex", "LpBall",
                     "NonIsotropic", "Regularizer", "Spectrahedron", "VKRPenalty", "WeightedL1",
                     "block_from_weight_norm", "weight_from_block_norm"], "regularizers"),
    "MKLResult": "results", "learn_weights": "weight_methods", "compile": "compiling",
}

#: Modules that moved into the subpackages ``certificates``, ``results`` and
#: ``model_selection`` in 0.2.0 (and the compile watch into the compiled core's package, so that
#: it is installed before any compiled module loads): the old names still import, with a
#: DeprecationWarning.
MOVED = {f"mklopt.{old}": f"mklopt.{new}" for old, new in {
    "bounds": "certificates.bounds", "feasibility": "certificates.feasibility",
    "recertify": "certificates.recertify", "krr_certificate": "certificates.krr",
    "vkr_certificate": "certificates.vkr", "result": "results.result",
    "result_io": "results.result_io", "polish": "results.polish", "sweep": "model_selection.search",
    "sweep_run": "model_selection.sweep_run", "sweep_log": "model_selection.sweep_log",
    "sweep_tasks": "model_selection.sweep_tasks", "compiling.watch": "_compiled.watch"}.items()}


class _MovedModules(_abc.MetaPathFinder, _abc.Loader):
    """Import an old module name as its new module (the same object), saying where it went."""

    def find_spec(self, fullname, path=None, target=None):
        return _util.spec_from_loader(fullname, self) if fullname in MOVED else None

    def create_module(self, spec):
        _warnings.warn(f"{spec.name} moved to {MOVED[spec.name]}; import it from there "
                       "(the old name goes in a later release)", DeprecationWarning, stacklevel=2)
        return _importlib.import_module(MOVED[spec.name])

    def exec_module(self, module):
        """The new module is already executed."""


if not any(isinstance(finder, _MovedModules) for finder in _sys.meta_path):
    _sys.meta_path.append(_MovedModules())


def __getattr__(name: str):
    if name in PUBLIC:
        value = getattr(_importlib.import_module(f"mklopt.{PUBLIC[name]}"), name)
        globals()[name] = value  # found here from now on, without this function
        return value
    if f"mklopt.{name}" in MOVED:  # ``mklopt.result.X`` without importing it first
        return _importlib.import_module(f"mklopt.{name}")
    if not name.startswith("_") and _util.find_spec(f"mklopt.{name}") is not None:  # ``mklopt.kernels.X``
        return _importlib.import_module(f"mklopt.{name}")
    raise AttributeError(f"module 'mklopt' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "solve", "fit", "path", "certify", "compile", "learn_weights", "available_backends", "KernelSet", "kernel_stack", "views", "ViewKernel", "MKLResult",
    "Certificate", "Regularizer", "LpBall", "L1", "WeightedL1", "ElasticNet", "NonIsotropic",
    "ConstraintSet", "GroupSimplex", "Spectrahedron", "Fixed", "BlockNorm", "VKRPenalty", "block_from_weight_norm", "weight_from_block_norm",
    "MKLClassifier", "MKLRegressor", "MKLOneClass", "VKRClassifier", "Loss",
    "MKLError", "InvalidInputError", "KernelError", "NotPSDError", "BackendError", "SolverError",
]
