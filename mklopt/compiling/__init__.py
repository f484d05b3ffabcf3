"""Compiling mklopt's numba core: ahead of time (``compile``) and announced when a fit waits.

``mklopt._compiled.watch`` listens to numba's compile events (one log line on the ``mklopt``
logger when a fit waits more than two seconds for the compiler; what was compiled, for the
reports);
``warmup`` holds :func:`compile`, the small fits that reach every compiled path.
"""

from .warmup import CompileReport, compile
from .._compiled.watch import install, watching

__all__ = ["compile", "CompileReport", "install", "watching"]
