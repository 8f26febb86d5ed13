"""Every command-line tool: `python -m model.cli COMMAND ...` (or `python -m model.cli.COMMAND`)."""
