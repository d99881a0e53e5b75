"""The bundled catalogue, shipped as package data of mgpipe (found with importlib.resources).

Not code: the .def lists, PipeCalls.lock and include/ are the generator's input. This file
only makes the directory a package so that an installed mgpipe carries it.
"""
