"""The test suite, a package: pytest names each test module by its path from the repository
root (``tests.graphs.store.test_board``), so the folders can mirror the product's packages
without a folder such as ``tests/agents`` standing in for ``agents`` itself, the root is on
``sys.path`` for ``from tests.support... import``, and two folders may hold files of one name."""
