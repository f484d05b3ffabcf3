"""Hatchling build hook: the default fit's machine code, compiled while mklopt is installed.

Runs :func:`mklopt._compiled.ahead.build` in a child process of the build environment
(numba is a build requirement), loading only this subpackage (the rest of mklopt needs
packages a build environment does not have). An editable install writes the code into
the checkout (``mklopt/_compiled/_ahead``, ignored by git); a wheel carries it, and is
then tagged for this platform and Python. If the compile fails, the install goes on
without it: a fit then compiles on first use, as numba does. Not part of the wheel.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

CHILD = """
import sys, types
package = types.ModuleType("mklopt")
package.__path__ = [sys.argv[1]]
sys.modules["mklopt"] = package  # the subpackage alone, under its own name
from mklopt._compiled.ahead import build
for name, seconds in build(sys.argv[2]):
    print(f"  {name}: {seconds:.1f} s")
"""

TIMEOUT_S = 600


class AheadBuildHook(BuildHookInterface):
    """Compile :data:`mklopt._compiled.ahead.AHEAD` into the wheel or the checkout."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        package = Path(self.root) / "mklopt"
        editable = version == "editable"
        self._scratch = None if editable else tempfile.mkdtemp(prefix="mklopt-ahead-")
        folder = package / "_compiled" / "_ahead" if editable else Path(self._scratch) / "_ahead"
        shutil.rmtree(folder, ignore_errors=True)
        if self._compile(package, folder) and not editable:
            build_data["force_include"][str(folder)] = "mklopt/_compiled/_ahead"
            build_data["pure_python"] = False
            build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        if getattr(self, "_scratch", None):
            shutil.rmtree(self._scratch, ignore_errors=True)

    def _compile(self, package: Path, folder: Path) -> bool:
        self.app.display_info("mklopt: compiling the default fit's machine code (numba) ...")
        with tempfile.TemporaryDirectory() as scratch_cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=scratch_cache, MKLOPT_NO_AHEAD="1")
            try:
                done = subprocess.run([sys.executable, "-c", CHILD, str(package), str(folder)], env=env,
                                      capture_output=True, text=True, timeout=TIMEOUT_S)
            except (OSError, subprocess.TimeoutExpired) as error:
                return self._skip(folder, str(error))
        if done.returncode != 0:
            return self._skip(folder, (done.stderr.strip().splitlines() or ["no message"])[-1])
        self.app.display_info(done.stdout.rstrip())
        return True

    def _skip(self, folder: Path, why: str) -> bool:
        shutil.rmtree(folder, ignore_errors=True)
        self.app.display_warning(f"mklopt: the default fit's machine code was not built ({why}); "
                                 "the first fit will compile it (`mklopt compile` does it ahead).")
        return False
