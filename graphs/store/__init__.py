"""Where the graph keeps what it does: the board (its interface, the SQLite board, the
PostgreSQL board), LangGraph's checkpoints, run owners, and the errors a store can give.
"""
