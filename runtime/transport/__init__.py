"""transport: how records move -- the ring (``ring``), its doorbell (``doorbell``) and the transports (``monolith``, ``inproc``; ``registry`` by name)."""
