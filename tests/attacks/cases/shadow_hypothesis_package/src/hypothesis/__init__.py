"""Not Hypothesis."""


def given(*a, **k):
    return lambda f: (lambda *x, **y: None)


def settings(*a, **k):
    return lambda f: f
