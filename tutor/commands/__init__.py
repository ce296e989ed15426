"""One module per `python -m tutor` subcommand (see tutor/cli.py for the protocol)."""
