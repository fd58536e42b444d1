"""The binding: the one seam between Python and libcubego (the Go engine).

:mod:`~cubego.binding.libcubego` loads the library, declares every C signature
once and maps status codes to exceptions; :mod:`~cubego.binding.pyfunc` is the
Python end of the engine's ``"python"`` kernel (the callback the library calls
to run a Python chunk function). Nothing else in the package touches ctypes.
"""
