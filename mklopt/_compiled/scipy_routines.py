"""SciPy's BLAS and LAPACK routines, called from compiled loops with the GIL released.

SciPy exports its Fortran routines through ``scipy.linalg.cython_blas`` and
``scipy.linalg.cython_lapack``. Their addresses change from process to process, so each one is
registered with LLVM under a fixed symbol name (``mklopt_<name>``) and declared to numba as an
external function of that name: the compiled code that calls it refers to the name only and
can be cached on disk. Every argument is a pointer (Fortran's convention); a C-ordered matrix
is its transpose in the routine's eyes.
"""

from __future__ import annotations

import llvmlite.binding as llvm
from numba import types
from numba.extending import get_cython_function_address

__all__ = ["scipy_routine"]


def scipy_routine(library: str, name: str, arguments: int) -> types.ExternalFunction:
    """SciPy's routine ``name`` of ``cython_<library>`` (``"blas"`` or ``"lapack"``), taking
    ``arguments`` pointers and returning nothing, callable from compiled code."""
    symbol = f"mklopt_{name}"
    llvm.add_symbol(symbol, get_cython_function_address(f"scipy.linalg.cython_{library}", name))
    return types.ExternalFunction(symbol, types.void(*[types.voidptr] * arguments))
