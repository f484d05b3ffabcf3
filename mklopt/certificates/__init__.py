"""Duality-gap certificates: mklopt's own proof of how far an answer is from the optimum.

``gap`` certifies a candidate ``(weights, alpha)`` of MKL with any loss and weight set;
``bounds`` holds the certificate's numbers and the relative gap; ``feasibility`` measures
how far weights lie outside their set; ``krr`` and ``vkr`` are the certificates of kernel
ridge regression and of the Voted Kernel Regularization LP; ``recertify`` re-certifies a
saved result in the form it was solved in; ``fingerprint`` ties a result to its kernels.
"""

from .bounds import GAP_FLOOR, Certificate, relative_gap
from .feasibility import FEASIBILITY_TOL, relative_violation
from .fingerprint import check_fingerprint, kernel_fingerprint
from .gap import PrimalPoint, certificate, certify, primal_point_certificate, psd_kernel_set
from .krr import krr_certificate
from .recertify import certify_result
from .vkr import vkr_certificate

__all__ = ["certify", "certify_result", "certificate", "Certificate", "PrimalPoint",
           "primal_point_certificate", "psd_kernel_set", "relative_gap", "GAP_FLOOR",
           "FEASIBILITY_TOL", "relative_violation", "krr_certificate", "vkr_certificate",
           "kernel_fingerprint", "check_fingerprint"]
