"""client: the GL-like API (``api``), the tracker, the render state and its setters, the CSO cache, the suppressors and the slot allocator. Never imports the server."""
