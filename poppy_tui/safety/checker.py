"""The version of the discrepancy checks, stored with every revision's check results.

Checks run once per revision and are kept in the store (agent/store/checks.py), so the inbox
shows badges without recomputing them. Raise CHECKER_VERSION whenever what any check finds
changes (a new check, a changed rule, a new severity): stored results of another version are
then ignored and computed again, once.
"""

CHECKER_VERSION = 1
