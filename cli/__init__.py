"""The command line's own pieces beside app.py: its parser and global flags, logging, the
run display and the board commands.
"""
