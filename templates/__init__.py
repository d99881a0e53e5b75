"""The Jinja2 templates of the generated outputs, shipped as package data of mgpipe (found
with importlib.resources). Not code: one ``.j2`` per output."""
