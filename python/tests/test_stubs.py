"""The type stubs (_troupe.pyi, preprocess/__init__.pyi) against the compiled module: every
class and method they name exists, and every public class and method the module has is named."""
import ast
import inspect
import pathlib

import pytest

import troupe
import troupe.preprocess
from troupe import _troupe

PACKAGE = pathlib.Path(troupe.__file__).parent
STUBS = [(PACKAGE / "_troupe.pyi", _troupe), (PACKAGE / "preprocess" / "__init__.pyi", _troupe.preprocess)]


def stub_classes(path: pathlib.Path) -> dict:
    tree = ast.parse(path.read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)} | \
                             {n.target.id for n in node.body if isinstance(n, ast.AnnAssign)} | \
                             {n.name for n in node.body if isinstance(n, ast.ClassDef)}
    return out


@pytest.mark.parametrize("path,module", STUBS, ids=lambda v: getattr(v, "name", ""))
def test_stubs_and_module_name_the_same_things(path, module):
    stubs = stub_classes(path)
    for name, members in stubs.items():
        assert hasattr(module, name), f"{path.name}: {name} is not in {module.__name__}"
        for member in members:
            assert hasattr(getattr(module, name), member), f"{path.name}: {name}.{member} is not in the module"
    for name, cls in vars(module).items():
        if not inspect.isclass(cls) or name.startswith("_") or issubclass(cls, BaseException):
            continue
        assert name in stubs, f"{module.__name__}.{name} has no stub in {path.name}"
        public = {m for m in vars(cls) if not m.startswith("_") and m not in ("name", "value")}
        if hasattr(cls, "__members__"):  # an enum: its values are annotations in the stub
            public |= set(cls.__members__)
        missing = public - stubs[name]
        assert not missing, f"{path.name}: {name} lacks {sorted(missing)}"
