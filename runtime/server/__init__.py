"""server: the applier (``applier``, ``apply_state``), the handle tables and field map, and the working state (``context``, ``working_state``)."""
