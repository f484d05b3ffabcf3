"""scikit-learn's input validation, its errors as mklopt's.

``validate_data``, ``column_or_1d`` and ``check_classification_targets`` raise ``ValueError``
(and ``TypeError`` for sparse input) in scikit-learn's words; here they become
:class:`~mklopt.exceptions.InvalidInputError` (itself a ``ValueError``, and
:class:`~mklopt.exceptions.InputTypeError` a ``TypeError`` too, so scikit-learn's estimator
checks still recognize them) on one line, with scikit-learn's text kept: what is wrong and
how to reshape, or that a class label is continuous or of mixed types.
"""

from __future__ import annotations

from typing import Any

from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_consistent_length, column_or_1d, validate_data

from ..exceptions import InputTypeError, InvalidInputError

__all__ = ["checked_data", "checked_targets", "checked_column", "checked_lengths"]


def checked_data(estimator: Any, *args, **kwargs):
    """:func:`sklearn.utils.validation.validate_data`, raising :class:`InvalidInputError`."""
    return _as_ours(estimator, validate_data, estimator, *args, **kwargs)


def checked_targets(estimator: Any, y: Any) -> None:
    """:func:`sklearn.utils.multiclass.check_classification_targets` (class labels, not a
    continuous or mixed target), raising :class:`InvalidInputError`."""
    _as_ours(estimator, check_classification_targets, y)


def checked_column(estimator: Any, y: Any):
    """:func:`sklearn.utils.validation.column_or_1d` (a 2-D ``y`` of one column is raveled),
    raising :class:`InvalidInputError`."""
    return _as_ours(estimator, column_or_1d, y)


def checked_lengths(estimator: Any, *arrays: Any) -> None:
    """:func:`sklearn.utils.validation.check_consistent_length`, raising :class:`InvalidInputError`."""
    _as_ours(estimator, check_consistent_length, *arrays)


def _as_ours(estimator: Any, check, *args, **kwargs):
    """``check(*args, **kwargs)``, its ``ValueError`` or ``TypeError`` as mklopt's, on one line."""
    try:
        return check(*args, **kwargs)
    except InvalidInputError:
        raise
    except (ValueError, TypeError) as exc:
        text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        kind = InputTypeError if isinstance(exc, TypeError) else InvalidInputError
        raise kind(f"{type(estimator).__name__}: {text}") from None
