"""The handlers of `python -m scripts <command>`, one module per stage (plan, build, verify, publish, fleet); the
command table and the error boundary stay in scripts/cli.py. Handlers sit above every stage (a render refreshes locks,
a gate reads the release and the fleet), so they are the front's, not a stage's."""
