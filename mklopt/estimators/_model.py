"""What a fitted MKL estimator keeps, and how it predicts from it.

A fitted estimator keeps the support vectors' features and coefficients, the kernel
weights, the offsets and the normalization constants of the training kernels, never the
training kernel stack: test kernels are evaluated against the support vectors only, with the
training normalization. With low-rank factors (``rank=r``) it keeps the fitted feature map
and the :math:`R`-vector :math:`w = G^\\top c` of each problem instead
(:class:`~mklopt.kernels.out_of_sample.FeatureMap`); with ``kernels="precomputed"`` the test
kernels come in ``X`` and are sliced to the support vectors.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..kernels import KernelSet, kernel_stack
from ..kernels._normalize import normalize_test
from ..results.result import MKLResult, decision_values
from .kernel_specs import diagonals
from .precomputed import prediction_array, prediction_stack
from ._checked import checked_data

__all__ = ["StoredModel"]


class StoredModel:
    """The stored model of the MKL estimators (a mixin of :class:`~mklopt.estimators._base.MKLEstimatorBase`)."""

    def _store(self, results: list[MKLResult], kernel_set: KernelSet, X: np.ndarray) -> None:
        """Keep what prediction needs: support vectors, their coefficients, the normalization."""
        coefs = [np.atleast_2d(np.asarray(r.dual_coef, dtype=float)) for r in results]
        nonzero = np.any(np.abs(np.vstack(coefs)) > 0, axis=0)
        self.support_ = np.flatnonzero(nonzero)
        self._n_train = kernel_set.n
        precomputed = self._precomputed()  # X is the stack: no feature vectors to keep
        self.support_vectors_ = np.empty((0, kernel_set.n)) if precomputed else X[self.support_]
        self._scales = np.asarray(kernel_set.scales, dtype=float).copy()
        diag = kernel_set._train_diag
        self._train_diag = None if diag is None else diag[:, self.support_].copy()
        self._coef = [np.asarray(r.dual_coef, dtype=float)[..., self.support_] for r in results]
        self._biases = [r.bias for r in results]
        self._weights = [np.asarray(r.weights, dtype=float) for r in results]
        self._feature_map = None
        if kernel_set.factored:  # prediction needs the map to G_m(x) and w = G'c, not the factors
            self._feature_map, self._offsets = kernel_set.feature_map(), kernel_set.offsets.copy()
            self._primal = [kernel_set.G.T @ np.asarray(r.dual_coef, dtype=float).T for r in results]

    # ----------------------------------------------------------- predict
    def _test_kernels(self, X: np.ndarray) -> np.ndarray:
        """Normalized kernels between ``X`` and the support vectors, shape (M, n_test, n_SV)."""
        T = kernel_stack(X, self.kernel_specs_, self.support_vectors_)
        test_diag = diagonals(X, self.kernel_specs_) if self._train_diag is not None else None
        return normalize_test(T, self._scales, self._train_diag, test_diag)

    def _decision(self, X) -> np.ndarray:
        """Decision values: one column per stored problem (or per class of a shared one)."""
        check_is_fitted(self)
        at_once = len(self._coef) > 1 and all(np.ndim(c) == 1 and np.ndim(b) == 0
                                              for c, b in zip(self._coef, self._biases))
        if self._precomputed() and at_once:
            return self._precomputed_at_once(prediction_array(X, self._n_train, len(self._scales)))
        if self._precomputed():  # the test kernels against every training point
            T = prediction_stack(X, self._n_train, len(self._scales))[:, :, self.support_]
            T = normalize_test(T, self._scales, None, None)  # in place on the indexing's copy
        else:
            X = checked_data(self, X, reset=False, dtype=np.float64)
            if getattr(self, "_feature_map", None) is not None:
                scores = [self._feature_map.decision_values(X, w, v, self._offsets, b)
                          for w, v, b in zip(self._weights, self._primal, self._biases)]
                return scores[0] if len(scores) == 1 else np.column_stack(scores)
            T = self._test_kernels(X)
        if at_once:
            return self._problems_at_once(T)
        scores = [decision_values(T, w, c, b) for w, c, b in zip(self._weights, self._coef, self._biases)]
        return scores[0] if len(scores) == 1 else np.column_stack(scores)

    def _problems_at_once(self, T: np.ndarray) -> np.ndarray:
        """Every binary problem's :math:`f_r = \\sum_m \\mu_{r,m} T_m c_r + b_r` in one product
        with the test stack (one-vs-rest classes, one-vs-one pairs: one pass over it, not one
        per problem), shape (n_test, problems)."""
        W = np.ascontiguousarray(self._stacked_coefficients().transpose(1, 2, 0))  # (M, n_SV, R)
        # kernel by kernel: each T_m read in place (tensordot would first copy the whole stack
        # into its axes' order)
        scores = np.matmul(T, W).sum(axis=0)
        return scores + np.array(self._biases, dtype=float)

    def _precomputed_at_once(self, X: np.ndarray) -> np.ndarray:
        """:meth:`_problems_at_once` on a precomputed test array (n_test, n_train, M) as given:
        its support columns gathered once, the kernels' scales folded into the coefficients,
        one matrix product (no (M, n_test, n_SV) stack moved out of the caller's layout)."""
        T = np.take(X, self.support_, axis=1)  # (n_test, n_SV, M), C-contiguous (X[:, i, :] is not)
        W = self._stacked_coefficients(self._scales)
        W = np.ascontiguousarray(W.transpose(2, 1, 0)).reshape(-1, W.shape[0])  # (n_SV M, R)
        return T.reshape(T.shape[0], -1) @ W + np.array(self._biases, dtype=float)

    def _stacked_coefficients(self, scales: np.ndarray | None = None) -> np.ndarray:
        """:math:`\\mu_{r,m} c_r` of every problem r (times the kernels' ``scales``), shape (R, M, n_SV)."""
        weights = np.array(self._weights) if scales is None else np.array(self._weights) * scales
        return weights[:, :, None] * np.array(self._coef)[:, None, :]
