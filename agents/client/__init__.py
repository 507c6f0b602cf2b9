"""The OpenAI-compatible HTTP client: transport, retries, endpoint errors, replicas, and what
the client asks a server once (its model list, its chat template).
"""
