"""Kernel matrices: the validated :class:`KernelSet`, construction from data, spectra.

* :mod:`~mklopt.kernels.kernelset` — :class:`KernelSet` (validation, access, products;
  :mod:`~mklopt.kernels._spectral`: factors,
  tail sums, alignment, normalizations).
* :mod:`~mklopt.kernels.factorset` — :class:`FactorKernelSet`, kernels as
  low-rank factors :math:`G_mG_m^\\top` (:mod:`~mklopt.kernels.approximate`: Nyström, RFF).
* :mod:`~mklopt.kernels.lazy` — :class:`LazyKernelSet`, kernels computed on the fly
  from data, column by column (:mod:`~mklopt._compiled.columns`: compiled column oracles).
* :mod:`~mklopt.kernels.construct` — :func:`kernel_stack` from features and specs.
* :mod:`~mklopt.kernels.views` — :class:`ViewKernel`, :func:`views`: kernels on groups of columns.
* :mod:`~mklopt.kernels.spectra` — :func:`top_eigenvalues`, :func:`tail_sum`.
* :mod:`~mklopt._compiled.products` — :func:`quadratic_terms`, the per-iteration pass.

A valid float64, C-contiguous, symmetric stack is used in place (a read-only
view); mklopt never writes to it.
"""

from __future__ import annotations

from scipy.sparse.linalg import eigsh  # looked up here at call time (tests replace it)

from ._normalize import NORMALIZATIONS
from ._psd import PSD_CHECKS
from .construct import KernelSpec, kernel_stack, spec_name
from .factorset import FactorKernelSet, TestFactors
from .kernelset import KernelSet
from .lazy import LazyKernelSet
from .._compiled.products import quadratic_terms
from .spectra import eigh as _eigh
from .spectra import tail_sum, top_eigenvalues
from .views import ViewKernel, views

_spec_name = spec_name  # former private name

__all__ = ["KernelSet", "FactorKernelSet", "LazyKernelSet", "TestFactors", "kernel_stack", "tail_sum", "top_eigenvalues", "quadratic_terms",
           "NORMALIZATIONS", "PSD_CHECKS", "KernelSpec", "eigsh", "ViewKernel", "views"]
