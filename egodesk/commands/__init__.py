"""The CLI's subcommands, one module per topic; each has `register(subparsers)`."""
