"""Media: decoding video and stills, probing files, frame times and sizes (Qwen's rules), the
frame cache and store, and the decode pool.
"""
