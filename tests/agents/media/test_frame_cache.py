"""The frame cache: one decode per frame set, across threads, processes and reruns."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from agents.media import frame_store, video
from agents.media.frame_cache import FrameCache


def test_concurrent_requests_for_one_set_decode_it_once(needle_video, monkeypatch):
    cache = FrameCache()
    monkeypatch.setattr(frame_store, "FRAME_CACHE", cache)
    times = tuple(video.overview_timestamps(needle_video.duration, 6))
    with ThreadPoolExecutor(8) as pool:
        results = list(
            pool.map(lambda _: frame_store.encode_frames(needle_video.path, times, 4096), range(16))
        )
    assert all(r is results[0] for r in results)
    assert cache.stats["made"] == 1 and cache.stats["frames_decoded"] == 6
    assert cache.stats["memory_hits"] == 15


def test_a_disk_cache_serves_a_fresh_process_without_decoding(needle_video, tmp_path, monkeypatch):
    times = (1.0, 2.0, 3.0)
    first = FrameCache(disk_dir=tmp_path)
    monkeypatch.setattr(frame_store, "FRAME_CACHE", first)
    made = frame_store.encode_frames(needle_video.path, times, 4096)
    second = FrameCache(disk_dir=tmp_path)  # as a rerun would start
    monkeypatch.setattr(frame_store, "FRAME_CACHE", second)
    again = frame_store.encode_frames(needle_video.path, times, 4096)
    assert again == made
    assert second.stats["frames_decoded"] == 0 and second.stats["disk_hits"] == 1


def test_a_torn_cache_file_is_made_again(needle_video, tmp_path, monkeypatch):
    cache = FrameCache(disk_dir=tmp_path)
    monkeypatch.setattr(frame_store, "FRAME_CACHE", cache)
    frame_store.encode_frames(needle_video.path, (5.0,), 4096)
    (entry,) = tmp_path.rglob("*.frames")
    entry.write_bytes(entry.read_bytes()[:20])
    fresh = FrameCache(disk_dir=tmp_path)
    monkeypatch.setattr(frame_store, "FRAME_CACHE", fresh)
    frames = frame_store.encode_frames(needle_video.path, (5.0,), 4096)
    assert len(frames) == 1 and fresh.stats["made"] == 1


def test_the_memory_cache_is_bounded():
    cache = FrameCache(max_entries=2)
    for key in range(5):
        cache.get_or_make(key, lambda k=key: k, dump=lambda v: [], load=lambda e: None)
    assert cache.stats["made"] == 5
    cache.get_or_make(4, lambda: -1, dump=lambda v: [], load=lambda e: None)
    cache.get_or_make(0, lambda: -1, dump=lambda v: [], load=lambda e: None)
    assert cache.stats["made"] == 6 and cache.stats["memory_hits"] == 1


def test_a_subset_of_a_set_in_memory_is_picked_out_not_decoded(needle_video, monkeypatch):
    """The verify gate's check shows some of the frames its sub-agent saw."""
    cache = FrameCache()
    monkeypatch.setattr(frame_store, "FRAME_CACHE", cache)
    window = frame_store.encode_frames(needle_video.path, (26.0, 28.0, 30.0, 32.0), 4096)
    cited = frame_store.encode_frames(needle_video.path, (28.0, 30.0), 4096)
    assert cited == window[1:3]
    assert cache.stats["frames_decoded"] == 4 and cache.stats["frames_reused"] == 2
    other_budget = frame_store.encode_frames(needle_video.path, (28.0,), 1024)
    not_held = frame_store.encode_frames(needle_video.path, (28.0, 29.0), 4096)
    assert cache.stats["frames_decoded"] == 4 + 1 + 2, "another budget, a frame not held"
    assert other_budget[0].width < window[1].width and not_held[0] == window[1]
