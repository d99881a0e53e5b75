"""schema: the one door to the generated tables (``tables``), their numpy/struct layouts (``layouts``) and the handle kinds (``kinds``)."""
