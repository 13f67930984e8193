"""Sending approvals, in the parts the dispatcher (agent/dispatcher.py: choosing what is due,
per Company) is made of. The lifecycle (agent/lifecycle) decides; these carry it out:

  port.py      what sending needs of the agent (`DispatchAgent`, a Protocol the facade meets)
  leases.py    holding an operation's lease while it is sent or waits to resend
  turns.py     at most N of one Company's operations sending at once
  attempts.py  attempt rows committed (and fsynced) in groups before their requests leave
  settles.py   outcomes committed in groups
  answers.py   the Company's answer (an Exchange) read as the lifecycle's `Answer`
  driver.py    one operation: the lifecycle's Due, the send, its Answer, and what they say to do
"""
