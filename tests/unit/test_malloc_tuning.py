"""glibc's mmap threshold stays fixed: a big block freed does not let the next
256 KiB reads (asyncio's ``recv`` buffers) be carved from the heap, where their shrunk
remainders fragmented it and the idle terminal grew by about 0.5 MB a minute."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app.ui.malloc_tuning import malloc_info

PROBE = """
import ctypes
from app.ui.malloc_tuning import fix_malloc_thresholds, malloc_info
if {fix}:
    assert fix_malloc_thresholds()
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.free(libc.malloc(700_000))  # a big block, freed: glibc would raise its threshold to it
mapped = malloc_info().hblks
block = libc.malloc(262_177)  # what asyncio's recv(256 KiB) asks for
print(malloc_info().hblks - mapped)
libc.free(block)
"""


def mapped_on_its_own(fix: bool) -> bool:
    """In a fresh interpreter: is a 256 KiB block given its own mapping (not the heap's)?"""
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(fix=fix)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.split() == ["1"]


@pytest.mark.skipif(malloc_info() is None, reason="glibc's malloc only")
def test_a_256_kib_read_stays_out_of_the_heap_after_a_big_block_was_freed() -> None:
    assert mapped_on_its_own(fix=True)
    assert not mapped_on_its_own(fix=False)  # what glibc does by itself: the probe sees it
