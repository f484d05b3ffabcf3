"""Weight methods: kernel weights chosen first, then the SVM (or any loss) at those weights.

:func:`learn_weights` runs any registered method; ``MKLClassifier(driver=name)``
runs it on the training kernels and fits the certified SVM at its weights.
Each method is one small module that registers itself (:mod:`.registry`):

======================  ================================================================
``align``, ``alignf``   centered alignment (Cortes, Mohri & Rostamizadeh 2012)
``easymkl``             EasyMKL (Aiolli & Donini 2015)
``rmkl``                R-MKL, radius-weighted ℓ1-MKL (Do et al. 2009)
``gram``                GRAM, minimum radius/margin ratio (Lauriola et al. 2017)
``memo``                MEMO, margin against complexity (Lauriola et al. 2018)
``pwmk``                PWMK, per-kernel accuracy (Tanabe et al. 2008)
``fheuristic``          FHeuristic, per-kernel alignment (Qiu & Lane 2009)
======================  ================================================================
"""

from __future__ import annotations

import numpy as np

from .. import alignment
from ..exceptions import InvalidInputError, SolverError
from .._options import Choice, check_options
from .registry import METHODS, WeightFit, WeightMethod, register


def _alignment_method(name: str):
    def method(kernels, y, *, norm: int | None = None) -> WeightFit:
        return WeightFit(alignment.learn_weights(kernels, y, name, norm=norm), {"method": name})

    method.__name__ = name
    method.__doc__ = f"Centered-alignment weights ``{name}`` (:func:`mklopt.alignment.learn_weights`)."
    return method


for _name in alignment.METHODS:
    register(WeightMethod(
        _name, _alignment_method(_name), targets="any",
        summary="centered alignment with yy' (Cortes, Mohri & Rostamizadeh 2012)",
        certified="alignf exactly (an NNLS solved in finitely many steps); the SVM at the weights",
        page="alignment.md", options={"norm": Choice((None, 1, 2))}))

from . import easymkl, heuristics, memo, radius_margin  # noqa: F401  (they register themselves)

__all__ = ["METHODS", "WeightFit", "WeightMethod", "learn_weights", "register"]


def learn_weights(kernels, y, method: str = "align", *, return_info: bool = False, **options):
    """Kernel weights from a weight method (two-stage MKL).

    Parameters
    ----------
    kernels : KernelSet, array (M, n, n) or list of (n, n) arrays
    y : array (n,)
        Two-class labels; ``"align"``/``"alignf"`` also take real targets.
    method : str
        One of :data:`METHODS`: ``"align"``, ``"alignf"``, ``"easymkl"``, ``"rmkl"``,
        ``"gram"``, ``"memo"``, ``"pwmk"``, ``"fheuristic"``.
    return_info : bool
        Also return the method's ``info`` dict (its own certificate where it has one).
    **options
        The method's options (e.g. ``lam`` for EasyMKL, ``C`` for R-MKL and PWMK,
        ``theta`` for MEMO, ``norm`` for the alignment methods); see each method.

    Returns
    -------
    weights : ndarray (M,)
        Nonnegative weights.
    info : dict
        Only with ``return_info=True``.

    Examples
    --------
    >>> import numpy as np, mklopt
    >>> from sklearn.metrics.pairwise import rbf_kernel
    >>> X = np.random.default_rng(0).standard_normal((40, 3)); y = np.sign(X[:, 0])
    >>> K = np.stack([rbf_kernel(X, gamma=g) for g in (0.1, 1.0, 10.0)])
    >>> mu = mklopt.learn_weights(K, y, "easymkl", lam=0.1)
    >>> bool(np.isclose(mu.sum(), 1.0)), mu.shape
    (True, (3,))
    """
    if method not in METHODS:
        raise InvalidInputError(f"unknown weight method {method!r}; choose one of {list(METHODS)}.")
    try:
        function = METHODS[method].function
        options = check_options(f"weight method {method!r}", METHODS[method].options, options)
        found = function(kernels, y, **options)
    except TypeError as exc:
        if "unexpected keyword" not in str(exc):
            raise
        raise InvalidInputError(f"weight method {method!r}: {exc}; see help({function.__module__}."
                                f"{function.__name__}) for its options.") from None
    weights = np.asarray(found.weights, dtype=float)
    if not np.all(np.isfinite(weights)):  # never NaN weights as an answer
        raise SolverError(f"weight method {method!r} gave non-finite weights {weights}; the kernels' scales may "
                          "be extreme: normalize them first (KernelSet.normalized('trace')).")
    return (weights, found.info) if return_info else weights
