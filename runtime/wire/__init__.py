"""wire: the record codec (``codec``, ``spec``), the record header (``header``), the staging segment (``stage``) and the ``Handle`` value (``handle``)."""
