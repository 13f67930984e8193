"""The protocol core: pure data, parsing and validation. No I/O, no Textual.

Every other package depends on this one; it depends on nothing of ours.
"""
