"""One module per graph node; each exposes a factory taking the node's dependencies."""
