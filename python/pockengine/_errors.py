"""Errors: every failure of the C++ layers arrives as a :class:`pockengine.Error` whose subclass,
``code`` and ``status`` name the C status (``pock_status`` in include/pock/pock.h) and whose
message is the runtime's or compiler's own, naming the tensor, op or field at fault.

    try:
        engine.set_input("nope", x)
    except pockengine.NotFoundError as e:
        print(e.status, e.code, e.message)   # POCK_ERR_NOT_FOUND 9 no input named 'nope'
"""


class Error(Exception):
    """A PockEngine failure: ``code`` (int), ``status`` (the C enum's name), ``message``."""

    code = -1
    status = "POCK_ERR_UNKNOWN"

    def __init__(self, message):
        super().__init__(message)
        self.message = message

    def __str__(self):
        return f"{self.status}: {self.message}"


# pock_status, value for value (python/tests/test_errors.py checks this table against pock.h).
STATUSES = {
    1: ("POCK_ERR_INVALID_ARGUMENT", "InvalidArgumentError"),
    2: ("POCK_ERR_INVALID_BLOB", "InvalidBlobError"),
    3: ("POCK_ERR_UNSUPPORTED_OP", "UnsupportedOpError"),
    4: ("POCK_ERR_MISSING_KERNEL", "MissingKernelError"),
    5: ("POCK_ERR_SHAPE_MISMATCH", "ShapeMismatchError"),
    6: ("POCK_ERR_OUT_OF_MEMORY", "OutOfMemoryError"),
    7: ("POCK_ERR_NUMERICAL", "NumericalError"),
    8: ("POCK_ERR_IO", "IoError"),
    9: ("POCK_ERR_NOT_FOUND", "NotFoundError"),
    10: ("POCK_ERR_INTERNAL", "InternalError"),
    11: ("POCK_ERR_BACKEND", "BackendError"),
    12: ("POCK_ERR_BUSY", "BusyError"),
}

ERROR_CLASSES = {}
for _code, (_status, _name) in STATUSES.items():
    ERROR_CLASSES[_code] = type(_name, (Error,), {
        "code": _code, "status": _status, "__module__": "pockengine",
        "__doc__": f"{_status}: see include/pock/pock.h."})
del _code, _status, _name


def error_from_status(code, message):
    """The exception for a status code and message (the native module raises what this returns)."""
    cls = ERROR_CLASSES.get(code)
    if cls is None:
        error = Error(message)
        error.code = code
        return error
    return cls(message)
