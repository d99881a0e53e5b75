"""transport: how records move -- the ring (``ring``), its doorbell (``doorbell``) and the
transports (``monolith``, ``inproc``, ``spawn``; ``registry`` by name).

``spawn`` is built from one-concern modules: ``framing`` (control-plane frames),
``control`` (control messages), ``shm`` (shared segments), ``control_page`` (the ring's
cursors and parked flags), ``sockbell`` (the socket doorbell), ``shared_ring`` (the ring
over ``SEG_CMD``), ``process`` (starting the child), ``spawn`` (the client side) and
``serve`` (the server process).
"""
