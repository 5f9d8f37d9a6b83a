"""A fixed mmap threshold for glibc's malloc, so an idle terminal's memory stays flat.

Measured (``tests/perf/bench_idle.py --soak``, heaptrack): at 10 Hz the client reads
about 40 responses a second, and asyncio reads each with ``sock.recv(256 KiB)`` — a 262,177-byte
bytes object, shrunk to the response's size right after. glibc serves blocks of 128 KiB and
more with their own ``mmap`` at first, but raises that threshold to the size of each such block
it frees (here, among others, Qt's 609 KB graphics-view pixmaps, made and freed as the plots
repaint). From then on the 256 KiB reads were carved from the heap and shrunk in place, the
small remainders left between other blocks: over 240 s the heap's free space grew by 1.95 MB
while its live blocks grew by 0.43 MB, and the process by 3.6 MB, linearly. Fixing the
thresholds at glibc's own starting values (128 KiB: big blocks are mapped and unmapped, the
heap's top is given back past 128 KiB free) kept it flat in the same run (+0.13 MB over the
last 180 s). A handful of ``mmap``/``munmap`` calls a second cost nothing measurable. A
periodic ``malloc_trim`` would only clean up after the fact, with a walk of the whole heap on
the GUI thread; this keeps the blocks out of the heap in the first place.

Set by the terminal's own process only (``app.ui.launch.run``, before Qt or the client
allocate); the sandbox child and the command line keep glibc's defaults. Elsewhere than glibc
(macOS, Windows, musl) this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

#: glibc's ``mallopt`` parameters (malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: Blocks of this size and more get their own mapping; the heap's top is given back past it.
THRESHOLD = 128 * 1024


def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc, else None. Loaded by its soname: ``find_library`` would
    start an ``ldconfig`` process at every launch."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.gnu_get_libc_version  # noqa: B018  # glibc's own symbol: not musl
        libc.mallopt  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


def fix_malloc_thresholds() -> bool:
    """Fix glibc's mmap and trim thresholds at ``THRESHOLD`` (no dynamic rise). True when
    set; False where the C library is not glibc."""
    libc = _glibc()
    if libc is None:
        return False
    mallopt = libc.mallopt
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, THRESHOLD))


class MallInfo(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (all arenas summed)."""

    _fields_ = [
        (name, ctypes.c_size_t)
        for name in [
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        ]
    ]


def malloc_info() -> MallInfo | None:
    """glibc's ``mallinfo2()``; None without glibc or before glibc 2.33 (no ``mallinfo2``:
    the figures only, the thresholds are fixed there too)."""
    libc = _glibc()
    if libc is None or not hasattr(libc, "mallinfo2"):
        return None
    mallinfo2 = libc.mallinfo2
    mallinfo2.restype = MallInfo
    info: MallInfo = mallinfo2()
    return info


def malloc_figures() -> dict[str, float] | None:
    """What glibc's malloc holds (MB): ``in_use`` by live blocks of its arenas, ``free`` kept
    in them (fragments, or room not yet given back), of which ``top`` at the main heap's end
    (given back only past the trim threshold), ``mmapped`` big blocks. A growth in ``free`` is
    the allocator's retention; in ``in_use``, live objects. None without glibc."""
    info = malloc_info()
    if info is None:
        return None
    return {
        "in_use": info.uordblks / 2**20,
        "free": info.fordblks / 2**20,
        "top": info.keepcost / 2**20,
        "mmapped": info.hblkhd / 2**20,
    }
