"""Kernel sets built from features: the body of :meth:`KernelSet.from_data`.

Features are checked once (:func:`~mklopt.kernels.features.check_features`) and
``"gamma": "scale"`` resolved (:func:`~mklopt.kernels.views.resolve_scale`); then kernels on
the fly, low-rank factors, or the dense stack — built, checked and normalized on the kernels'
own threads for specs PSD by construction (:mod:`~mklopt.kernels._build`), validated like a
user's stack otherwise — with the multiplicative normalization of linear and polynomial
kernels from centred data (:mod:`~mklopt.kernels.feature_variance`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..exceptions import KernelError
from ._build import FUSED_NORMALIZATIONS, built_kernel_set
from ._stack import OwnedStack
from .approximate import approximate_factors
from .construct import KernelSpec, kernel_stack, spec_list, spec_name, trusted_spec
from .feature_variance import data_variances
from .features import check_features
from .rounding import DataScales
from .views import resolve_scale

__all__ = ["data_kernel_set"]


def data_kernel_set(cls: type, variants: dict, X: Any, specs: Sequence[KernelSpec], names: Sequence[str] | None, *,
                    rank: int | None, approximation: str, random_state: int, normalization: str | None,
                    theta: int | None, lazy: bool, **kwargs):
    """:meth:`KernelSet.from_data` (``cls``: the class it is called on; ``variants``: the set
    classes on the fly and of factors, by name)."""

    X = check_features(X)
    specs = resolve_scale(spec_list(specs), X)
    if lazy:
        if rank is not None or kwargs:
            raise KernelError("lazy=True takes neither rank= nor validation options: kernels "
                              "on the fly are exact and PSD by construction.")
        return variants["lazy"](X, specs, names, normalization=normalization)
    if rank is not None:
        factors, fitted, auto = approximate_factors(X, specs, rank, approximation, random_state)
        return variants["factors"](factors, auto if names is None else names, approximators=fitted)
    if names is None:
        names = [spec_name(s, i) for i, s in enumerate(specs)]
    scales = DataScales.of(X)  # once for all specs
    trusted = all(trusted_spec(spec, scales) for spec in specs)
    if trusted and not kwargs and normalization in FUSED_NORMALIZATIONS:
        return built_kernel_set(cls, X, specs, names, normalization)
    stack = kernel_stack(X, specs)
    kernels = cls(OwnedStack(stack, trusted), names, **kwargs)  # rounding asymmetry removed in place
    if normalization is None:
        return kernels
    if normalization == "spherical":
        return kernels.normalized("spherical")
    divisors = kernels._divisors(normalization, theta, data_variances(X, specs, normalization))
    if kernels.K.base is not stack and kernels.K.base is not stack.base:  # validation copied it
        return kernels._divided(divisors)
    stack /= divisors[:, None, None]  # ours alone: nobody else holds this stack
    kernels._keep_divided(kernels, divisors)
    return kernels

