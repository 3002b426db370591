"""setuptools driving the project's CMake for the Python package (pyproject.toml).

The extension `troupe._troupe` is the CMake target _troupe, built in build-pip/cmake (or in
the CMake build folder TROUPE_BUILD_DIR names, e.g. build/, already configured with
TROUPE_PYTHON=ON); the package's .py files come from python/troupe. JOBS sets the build's
parallelism (2 by default)."""
import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def _version() -> str:
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(troupe VERSION ([0-9.]+)", text).group(1)


troupe_version = _version()


class CMakeExtension(Extension):
    def __init__(self, name: str) -> None:
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        build = pathlib.Path(os.environ.get("TROUPE_BUILD_DIR", ROOT / "build-pip" / "cmake")).resolve()
        if not (build / "CMakeCache.txt").exists() or "TROUPE_BUILD_DIR" not in os.environ:
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                            "-DTROUPE_PYTHON=ON", "-DTROUPE_TESTS=OFF", f"-DPython_EXECUTABLE={sys.executable}"],
                           check=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "_troupe", "-j", os.environ.get("JOBS", "2")],
                       check=True)
        built = sorted((build / "python" / "troupe").glob("_troupe*.so"))
        if not built:
            raise RuntimeError(f"the CMake build in {build} made no _troupe extension")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


(ROOT / "build-pip").mkdir(exist_ok=True)
setup(
    version=troupe_version,
    packages=find_packages("python", exclude=["tests"]),
    package_dir={"": "python"},
    package_data={"troupe": ["py.typed", "*.pyi"], "troupe.preprocess": ["*.pyi"]},
    ext_modules=[CMakeExtension("troupe._troupe")],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build-pip"}, "egg_info": {"egg_base": "build-pip"}},
    zip_safe=False,
)
