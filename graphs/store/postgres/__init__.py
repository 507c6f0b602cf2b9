"""The board and LangGraph's checkpoints in PostgreSQL: the scale-out store (psycopg's owner)."""
