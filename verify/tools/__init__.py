"""Tools run by hand beside the checks (`verify bench`): the data-path benchmark and the DataLoader advisor.

They use the libraries at verify/'s top level, as the checks do; nothing in the runtime (cli, runner, child,
checks) imports them, except the cli dispatching its `bench` subcommand.
"""
