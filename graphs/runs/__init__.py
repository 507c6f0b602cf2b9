"""Running a question through the compiled graph: the run and its resume rules, how a run
ends on the board, the trace, progress and streaming, and the event loop.
"""
