"""PyInstaller's entry script for the bundle: the same ``main`` as the ``tradeterm`` command.

``tradeterm --bundle-self-check`` (the bundle only, not in the command's help) says whether the
bundle carries what it needs that PyInstaller cannot see in the code: the resources folder and
the keyring with its backends, found the way keyring finds them (its entry points), with the
Secret Service stack on Linux. It needs no display and no D-Bus; exit 1 when something is
missing. tests/packaging/test_bundle.py runs it.
"""

import sys

from app.__main__ import main

SELF_CHECK = "--bundle-self-check"


def self_check() -> int:
    from importlib import import_module
    from importlib.metadata import entry_points, version

    from app import resources

    problems = [f"missing resource {name}" for name in resources.missing()]
    print(f"resources: {resources.resources_root()}")
    try:
        import_module("keyring")
    except ImportError as exc:
        print(f"keyring: not bundled ({exc})")
        return 1
    loaded = []
    for point in entry_points(group="keyring.backends"):
        try:
            point.load()
            loaded.append(point.name)
        except ImportError as exc:  # e.g. the Windows backend's win32 modules on Linux
            print(f"keyring backend {point.name}: not loadable ({exc})")
    print(f"keyring {version('keyring')}: backends {', '.join(sorted(loaded)) or 'none'}")
    if sys.platform.startswith("linux"):
        if "SecretService" not in loaded:
            problems.append("no Secret Service backend")
        for module in ("secretstorage", "jeepney.io.blocking"):
            try:
                import_module(module)
            except ImportError as exc:
                problems.append(f"{module} not bundled ({exc})")
    for problem in problems:
        print(f"problem: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    if sys.argv[1:] == [SELF_CHECK]:
        sys.exit(self_check())
    sys.exit(main())
