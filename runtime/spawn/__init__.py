"""The ``spawn`` transport: the applier and backend in a child process over shared memory.

Modules, one concern each: :mod:`.framing` (control-plane frames), :mod:`.control`
(control messages), :mod:`.shm` (shared segments), :mod:`.control_page` (the ring's
cursors and parked flags), :mod:`.sockbell` (the socket doorbell), :mod:`.shared_ring`
(the ring over ``SEG_CMD``), :mod:`.process` (starting the child), :mod:`.transport`
(the client side), :mod:`.serve` (the server process).
"""
