"""Only the build step that puts the files nvfp4ctl needs at run time into the wheel.

The repository keeps kernels/ and task.yml at its root (users edit them there, and an editable
install reads them there). A wheel has no repository around it, so build_py copies them into the
package as nvfp4ctl/_shipped/, where nvfp4ctl.project.shipped() finds them. Everything else about
the package is in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# Paths relative to the repository root, copied to the same relative paths under nvfp4ctl/_shipped.
SHIPPED = ("kernels", "task.yml", "tests/sm100/host/sm100_host_proof.cu", "docs")
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "*.o")


class BuildPyWithShipped(build_py):
    def run(self) -> None:
        editable = getattr(self, "editable_mode", False)  # an editable install reads the checkout itself
        if not editable:  # an in-tree build/ must not carry modules deleted from the source into the wheel
            shutil.rmtree(Path(self.build_lib) / "nvfp4ctl", ignore_errors=True)
        super().run()
        if editable:
            return
        target = Path(self.build_lib) / "nvfp4ctl" / "_shipped"
        for relative in SHIPPED:
            source, destination = ROOT / relative, target / relative
            if not source.exists():
                raise FileNotFoundError(f"{relative}: missing from the source tree (see MANIFEST.in)")
            destination.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, destination, ignore=IGNORED)
            else:
                shutil.copy2(source, destination)


setup(cmdclass={"build_py": BuildPyWithShipped})
