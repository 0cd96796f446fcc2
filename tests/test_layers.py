"""Layer rules: everything outside egodesk/gui imports and runs without Qt."""

import pkgutil
import subprocess
import sys

import egodesk

BLOCK_QT = r"""
import importlib.abc, sys
class BlockQt(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('PySide6', 'shiboken6', 'qasync'):
            raise ImportError(f'Qt is blocked outside egodesk.gui: {name}')
sys.meta_path.insert(0, BlockQt())
import importlib
for name in sys.argv[1:]:
    importlib.import_module(name)
print(len(sys.argv) - 1)
"""


def non_gui_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(egodesk.__path__, prefix="egodesk."):
        if info.name == "egodesk.gui" or info.name.startswith("egodesk.gui.") or info.name == "egodesk.__main__":
            continue
        names.append(info.name)
    return names


def test_every_module_outside_gui_imports_with_qt_blocked():
    modules = non_gui_modules()
    assert "egodesk.cli" in modules and "egodesk.core.settings" in modules
    result = subprocess.run([sys.executable, "-c", BLOCK_QT, *modules], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(len(modules))


def test_qt_blocker_really_blocks():
    result = subprocess.run([sys.executable, "-c", BLOCK_QT, "egodesk.gui.main_window"], capture_output=True, text=True)
    assert result.returncode != 0 and "Qt is blocked" in result.stderr
