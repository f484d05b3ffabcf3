"""The API reference page, generated from the modules' ``__all__`` at build time.

:data:`SECTIONS` is the list to edit: a title, a module and either the names
to show or ``None`` for every public class and function of the module's
``__all__``. Names exported by :mod:`mklopt` that no section lists land in a
final section, and a module that is not importable (yet) is left out, so a new
public name appears on the site without touching this file.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Sequence

#: (title, module, names or None for the module's public classes and functions).
SECTIONS: list[tuple[str, str, Sequence[str] | None]] = [
    ("Solve, fit and certify", "mklopt", ["solve", "fit", "path", "certify", "available_backends"]),
    ("Kernels", "mklopt", ["KernelSet", "kernel_stack", "views", "ViewKernel"]),
    ("Kernels as low-rank factors", "mklopt.kernels", ["FactorKernelSet", "TestFactors"]),
    ("Weight sets (regularizers)", "mklopt",
     ["Regularizer", "LpBall", "L1", "WeightedL1", "ElasticNet", "NonIsotropic", "ConstraintSet",
      "Fixed", "BlockNorm", "VKRPenalty", "block_from_weight_norm", "weight_from_block_norm"]),
    ("Results and certificates", "mklopt", ["MKLResult", "Certificate"]),
    ("Certificates", "mklopt.certificates",
     ["certify_result", "certificate", "PrimalPoint", "primal_point_certificate", "krr_certificate",
      "vkr_certificate", "relative_gap", "relative_violation", "kernel_fingerprint"]),
    ("Saving and loading results", "mklopt.results", ["save_result", "load_result"]),
    ("Model selection: paths and sweeps on Dask", "mklopt.model_selection", ["sweep", "SweepResult"]),
    ("Estimators (scikit-learn)", "mklopt.estimators", None),
    ("How driver='auto' chooses", "mklopt.estimators.cost", None),
    ("Losses", "mklopt.losses", None),
    ("Drivers", "mklopt.drivers", None),
    ("Weight methods (two stages)", "mklopt.weight_methods",
     ["learn_weights", "WeightFit", "WeightMethod", "register"]),
    ("Kernel weights from alignment", "mklopt.alignment", None),
    ("EasyMKL", "mklopt.weight_methods.easymkl", None),
    ("Radius-margin weights: R-MKL and GRAM", "mklopt.weight_methods.radius_margin", None),
    ("MEMO", "mklopt.weight_methods.memo", None),
    ("Heuristic weights: PWMK and FHeuristic", "mklopt.weight_methods.heuristics", None),
    ("Datasets", "mklopt.datasets", None),
    ("Verifying your own solver", "mklopt.testing", None),
    ("Plotting", "mklopt.plotting", None),
    ("Exceptions and warnings", "mklopt.exceptions", None),
]


def _public(module_name: str) -> list[str]:
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    return [n for n in names if inspect.isclass(getattr(module, n, None))
            or inspect.isfunction(getattr(module, n, None))
            and getattr(getattr(module, n), "__module__", "").startswith("mklopt")]


def _block(title: str, module: str, names: Sequence[str]) -> str:
    entries = "\n".join(f"   {name}" for name in names)
    return (f"{title}\n{'-' * len(title)}\n\n.. currentmodule:: {module}\n\n"
            f".. autosummary::\n   :toctree: generated\n   :nosignatures:\n\n{entries}\n")


def sections() -> list[tuple[str, str, list[str]]]:
    """The sections of the page with their resolved names (unimportable modules dropped)."""
    out = []
    for title, module, names in SECTIONS:
        try:
            resolved = list(names) if names is not None else _public(module)
        except ImportError:
            continue
        if resolved:
            out.append((title, module, resolved))
    import mklopt

    listed = {name for _, _, names in out for name in names}
    rest = [n for n in mklopt.__all__ if n not in listed]
    if rest:
        out.append(("Other names in mklopt", "mklopt", rest))
    return out


def api_page() -> str:
    """The reST of ``api.rst``."""
    head = ("API reference\n=============\n\n"
            "Every public class and function, grouped by what it is for. Docstrings follow numpydoc; "
            "**p is always the weight norm** :math:`\\|\\mu\\|_p\\le1`.\n\n")
    return head + "\n".join(_block(*section) for section in sections())
