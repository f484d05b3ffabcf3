"""Regenerate the certified reference instances of the catalogue.

Every instance of :data:`mklopt.testing.REFERENCE_DEFINITIONS` is rebuilt from
a dataset shipped with scikit-learn, solved with Clarabel at ``tol=1e-10``,
certified by mklopt's own duality-gap certificate (rel_gap <= 1e-9) and
cross-checked against a second formulation and other backends (1e-8).

``--only NAME ...`` rebuilds just the named instances (new or changed
definitions) and keeps every other record of the existing file as it is, so
their optima do not move by solver noise.

Run: ``python examples/make_reference_instances.py [--output PATH] [--only NAME ...]``
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

from mklopt.testing import (REFERENCE_DEFINITIONS, build_reference_instances, dumps_catalogue,
                            load_catalogue)

DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "formulations" / "reference_instances.json"


def kept_records(path: Path, only: list[str] | None) -> dict[str, dict]:
    """Records of the existing file to keep as they are: all but ``only`` (none without ``--only``)."""
    if not only:
        return {}
    return {r["name"]: r for r in load_catalogue(path)["instances"] if r["name"] not in only}


def regenerate() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        choices=[d["name"] for d in REFERENCE_DEFINITIONS],
                        help="rebuild only these instances; keep the others as stored in --output")
    args = parser.parse_args()
    start = time.perf_counter()
    keep = kept_records(args.output, args.only)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        document = build_reference_instances(keep=keep)
    args.output.write_text(dumps_catalogue(document), encoding="utf-8")
    for rec in document["instances"]:
        cert = rec["certified"]
        origin = "kept" if rec["name"] in keep else "built"
        print(f"{rec['name']:<22} {rec['formulation']:<16} n={rec['n']:<3} M={rec['M']} "
              f"OPT={cert['optimal_value']:.12g} rel_gap={cert['rel_gap']:.1e} "
              f"cross-checks={len(rec['cross_checks'])} ({origin})")
    print(f"wrote {args.output} in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    regenerate()
