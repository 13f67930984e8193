"""The command line: `poppy-tui` and its subcommands.

It makes requests for agents and scripts and shows what waits in the queue, but it
never decides: approving or declining happens only in the TUI, by a person.
Modules here import the agent, Textual and the network stack lazily so that
`poppy-tui --help` and `--version` stay fast.
"""
