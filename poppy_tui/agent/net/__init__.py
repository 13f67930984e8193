"""The agent's network edge: every byte to or from a Company passes here (the HTTP client and
netguard's checked-address connect). Domain logic lives outside this package."""
