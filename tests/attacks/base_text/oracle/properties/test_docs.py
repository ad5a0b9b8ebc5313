"""The module's documented examples hold, as toolz's own suite checks its curried namespace; and the examples
in its classes' docstrings, run one class at a time (with the oracle's globals, as a pack may)."""

import doctest

import calc.ops


def test_ops_doctests():
    assert doctest.testmod(calc.ops).failed == 0


def test_class_docstrings():
    for name in dir(calc.ops):
        if name.startswith("__"):
            continue
        obj = getattr(calc.ops, name)
        doc = getattr(obj, "__doc__", None)
        if callable(obj) and isinstance(doc, str) and ">>>" in doc:
            doctest.run_docstring_examples(obj, {"calc": calc}, name=name)


def test_module_doc_parsed():
    """The module docstring's examples, parsed and run explicitly (as some suites check README-like text)."""
    test = doctest.DocTestParser().get_doctest(calc.ops.__doc__ or "", {"calc": calc}, "calc.ops", None, 0)
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert runner.failures == 0


def test_readme():
    """The README's examples hold, as many projects check theirs (the work tree is the current directory)."""
    assert doctest.testfile("README.md", module_relative=False).failed == 0
