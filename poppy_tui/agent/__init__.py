"""The agent: paths, keys and Sessions, transports, the durable store and the approval state machine.

Depends on the protocol core (and safety for checks); never on the UI.
"""
