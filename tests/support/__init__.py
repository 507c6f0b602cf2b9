"""What tests share and no test collects: helpers, fakes, data builders, servers and CLIs.

A test module imports from here (or gets a fixture from a conftest.py), never from another
test module. The benches of ``bench/`` use some of it too (the harness, the fuzz targets,
the PostgreSQL cluster).
"""
