"""``mklopt solve``: one instance, exactly (``--formulation``) or with an outer loop (``--driver``).

Prints the certified result and, with ``--out FILE.npz`` (a saved result
that ``mklopt verify`` re-certifies) or ``--out FILE.json``, writes it
atomically. ``--out`` is checked before the solve; an interrupted or failed
run writes nothing.

Exit codes: 0 status ``optimal`` or ``converged``; 1 any other status
(``max_iter``, ``time_limit``, ``stalled``, ``uncertified``, ...; the result
is still written to ``--out``, its status says why); 2 usage or input error;
130 interrupted.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..exceptions import InvalidInputError
from ._common import (EXIT_FAIL, EXIT_OK, add_instance_args, check_backend_names, check_out,
                      load_instance, loss_options, norm_options)
from ._parsing import parse_param, positive_float, positive_int, tolerance

OUT_SUFFIXES = (".npz", ".json")
SUCCESS = ("optimal", "converged")


def add_parser(subs: argparse._SubParsersAction) -> None:
    """Register ``solve`` on the sub-parser action ``subs``."""
    solve = subs.add_parser("solve", help="solve one instance (a formulation or a driver)",
                            description="Solve one MKL instance exactly (--formulation) or with an "
                            "outer loop (--driver) and print the certified result. Exit status 0 "
                            "when the status is optimal or converged, 1 otherwise, 2 for bad "
                            "input, 130 when interrupted.")
    add_instance_args(solve)
    how = solve.add_mutually_exclusive_group()
    how.add_argument("--formulation", help="exact formulation (default lp_dual): svm, qcqp_l1, "
                     "lp_primal, lp_block_primal, lp_dual, dc_subproblem, vkr_lp, ...")
    how.add_argument("--driver", help="outer loop instead: wrapper, cutting_plane, chunking, dca, ...")
    solve.add_argument("--lazy", action="store_true",
                       help="with --data and --driver chunking: compute kernel columns on the fly "
                       "(no n x n matrix; --normalize trace or spherical)")
    solve.add_argument("--backend", help="CVXPY backend (CLARABEL, ECOS, SCS, HIGHS, ...)")
    solve.add_argument("--tol", type=tolerance, help="in (0, 1): backend tolerance (exact, "
                       "default 1e-8) or certified rel_gap (driver, default 1e-4)")
    solve.add_argument("--max-iter", type=positive_int, default=None,
                       help="driver iteration cap, a positive integer")
    solve.add_argument("--time-limit", type=positive_float, default=None, metavar="SECONDS",
                       help="driver time limit in seconds (status time_limit when reached)")
    solve.add_argument("--param", action="append", type=parse_param, metavar="KEY=VALUE",
                       help="extra formulation/driver parameter, repeatable (e.g. b=4, max_cuts=50)")
    solve.add_argument("--out", metavar="FILE", help="write the result to FILE.npz (a saved "
                       "result, see 'mklopt verify') or FILE.json, atomically")
    solve.set_defaults(handler=run)


def needs_psd(args: argparse.Namespace) -> bool:
    """Whether the requested formulation or driver needs PSD kernels (and exists)."""
    from ..drivers import DRIVERS
    from ..formulations import FORMULATIONS

    if args.driver:
        if args.driver not in DRIVERS:
            raise InvalidInputError(f"unknown driver {args.driver!r}; choose from {sorted(DRIVERS)}.")
        return bool(getattr(DRIVERS[args.driver], "needs_psd", True))
    name = args.formulation or "lp_dual"
    if name not in FORMULATIONS:
        raise InvalidInputError(f"unknown formulation {name!r}; choose from {sorted(FORMULATIONS)}.")
    return bool(getattr(FORMULATIONS[name], "needs_psd", True))


def _check_options(args: argparse.Namespace) -> None:
    """Option combinations that argparse cannot check by itself."""
    if not args.driver:
        for flag, value in (("--max-iter", args.max_iter), ("--time-limit", args.time_limit)):
            if value is not None:
                raise InvalidInputError(f"{flag} applies to --driver runs only (the exact "
                                        "formulations have no outer loop).")
    block_primal = not args.driver and args.formulation == "lp_block_primal"
    if args.b is not None and args.b > 2 and not block_primal:
        raise InvalidInputError(f"--b {args.b:g} > 2 has no weight-norm form (p would be negative); "
                                "use --formulation lp_block_primal.")


def run(args: argparse.Namespace) -> int:
    """Solve the instance; exit status 0 iff the result is optimal or converged."""
    from ..api import fit, solve

    out = check_out(args.out, OUT_SUFFIXES)
    _check_options(args)
    if args.backend is not None:
        check_backend_names([args.backend])
    losses = loss_options(args)
    if args.lazy and (not args.data or args.driver != "chunking"):
        raise InvalidInputError("--lazy computes kernels from features column by column: use it "
                                "with --data and --driver chunking.")
    ks, y = load_instance(args, psd=needs_psd(args), lazy=args.lazy)
    params = {**dict(args.param or []), **losses}
    if args.driver:
        p, _ = norm_options(args, None)
        if args.driver == "dca":
            params.setdefault("theta", args.theta)
        tol = args.tol or 1e-4
        print(f"solving: {ks.M} kernels, n = {ks.n}; driver {args.driver}, tol {tol:g}", flush=True)
        result = fit(ks, y, args.driver, C=args.C, p=p, tol=tol, max_iter=args.max_iter,
                     time_limit=args.time_limit, backend=args.backend, **params)
        if result.status == "interrupted":  # Ctrl-C: the command's contract is exit 130, no --out
            raise KeyboardInterrupt
    else:
        formulation = args.formulation or "lp_dual"
        p, extra = norm_options(args, formulation)
        params = {**extra, **params}
        if formulation == "dc_subproblem":
            params.setdefault("theta", args.theta)
        tol = args.tol or 1e-8
        print(f"solving: {ks.M} kernels, n = {ks.n}; formulation {formulation}", flush=True)
        result = solve(ks, y, formulation, C=args.C, p=p, backend=args.backend, tol=tol, **params)
    print(result.summary())
    if out is not None:
        write_result(result, out)
        print(f"wrote {out}")
    if result.status in SUCCESS:
        return EXIT_OK
    print(f"not {' or '.join(SUCCESS)}: status {result.status}"
          + (f" ({result.message})" if result.message else ""))
    return EXIT_FAIL


def write_result(result, path: str | Path) -> None:
    """Write ``result`` atomically with :meth:`MKLResult.save` (``.npz`` or ``.json``, the same
    fields: ``mklopt verify`` re-certifies either with the C, p, loss and tol it was solved with)."""
    result.save(Path(path))  # atomic itself (temporary file + os.replace)
