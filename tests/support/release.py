"""What the tests of the release protocols hold this project's requests to."""

from __future__ import annotations

# Two decoders (FFmpeg's YUV->RGB in torchcodec and in PyAV) and two bicubic resizes (torch's
# antialiased kernel and PIL's) stand between the same video and the two JPEGs. Measured over
# the 7,718 images of these episodes, their 8x8 means differ by at most 1 level (mean 0.007).
PIXEL_TOLERANCE = {"max": 2, "mean": 0.25}
