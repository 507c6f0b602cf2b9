"""OpenAI-compatible servers for local runs, tests and benchmarks."""
