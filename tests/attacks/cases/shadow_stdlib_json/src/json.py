"""Not the standard library."""


def loads(text, **kwargs):
    return []


def load(fh, **kwargs):
    return []


def dumps(obj, **kwargs):
    return "null"
