"""Test doubles the product never imports: the scripted OpenAI-compatible server, its
replies, and fault injection. Tests and benchmarks use them.
"""
