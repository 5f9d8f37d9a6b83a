"""``tradeterm doctor``: a self-check for the machine the terminal runs on.

Checks the Qt platform plugin (in a child process: a plugin that cannot load aborts Qt's
process), the shipped fonts and themes, the OS keyring, the config/data/log folders and their
permissions, the sandbox database's lock and, with ``--url``, the service. Prints a table and
exits 1 when any check FAILs (0 otherwise; 2 on a usage error). The terminal's own start uses
the platform advice of :mod:`app.services.qt_platform` when Qt cannot open a window.
"""
