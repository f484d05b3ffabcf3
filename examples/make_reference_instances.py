"""Regenerate ``formulations/reference_instances.json``, the certified reference instances.

Every instance of :data:`mklopt.testing.REFERENCE_DEFINITIONS` is rebuilt from
a dataset shipped with scikit-learn, solved with Clarabel at ``tol=1e-10``,
certified by mklopt's own duality-gap certificate (rel_gap <= 1e-9) and
cross-checked against a second formulation and other backends (1e-8).

Run: ``python examples/make_reference_instances.py [--output PATH]``
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

from mklopt.testing import build_reference_instances, dumps_catalogue

DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "formulations" / "reference_instances.json"


def regenerate() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        document = build_reference_instances()
    args.output.write_text(dumps_catalogue(document), encoding="utf-8")
    for rec in document["instances"]:
        cert = rec["certified"]
        print(f"{rec['name']:<22} {rec['formulation']:<16} n={rec['n']:<3} M={rec['M']} "
              f"OPT={cert['optimal_value']:.12g} rel_gap={cert['rel_gap']:.1e} "
              f"cross-checks={len(rec['cross_checks'])}")
    print(f"wrote {args.output} in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    regenerate()
