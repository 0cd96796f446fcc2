"""Entry point of the frozen app (PyInstaller one-folder build, see egodesk.spec).

A frozen app has no Python interpreter of its own, yet egodesk starts processes through
`sys.executable`, which is now this program: multiprocessing's spawned workers (the window's tasks),
`sys.executable -m MODULE ...` (the ingest worker, doctor's media check) and `sys.executable -c CODE
...` (doctor's llama.cpp probe). So this program takes those two interpreter options before the
`egodesk` command line.
"""

import multiprocessing
import runpy
import sys


def main() -> int:
    # A spawned worker (`--multiprocessing-fork`, or multiprocessing's resource tracker) runs its
    # target here and exits; PyInstaller's runtime hook makes this work on Linux too.
    multiprocessing.freeze_support()
    option, rest = sys.argv[1:2], sys.argv[2:]
    if option in (["-m"], ["-c"]) and not rest:
        print(f"egodesk: {option[0]} needs an argument", file=sys.stderr)
        return 2
    if option == ["-m"]:
        sys.argv = [rest[0], *rest[1:]]
        runpy.run_module(rest[0], run_name="__main__", alter_sys=True)
        return 0
    if option == ["-c"]:
        sys.argv = ["-c", *rest[1:]]
        exec(compile(rest[0], "<string>", "exec"), {"__name__": "__main__"})
        return 0
    from egodesk.cli import main as egodesk_main

    return egodesk_main()


if __name__ == "__main__":
    sys.exit(main())
