"""``tradeterm api ...``: the scriptable command line over the service client (app.api).

Imports only app.api and app.domain, so a script runs without Qt or the sandbox. Entry points:
``app.cli.main.main(argv)`` and, for arguments parsed elsewhere, ``app.cli.runner.run(args)``.
"""
