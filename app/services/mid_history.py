"""Chart history kept across restarts: one bid/ask sample a second per watched pair, bounded.

Format (chosen over SQLite because the only queries are "append" and "the latest N of one
pair", and numpy reads a flat file in about a millisecond): one append-only binary file per pair,
``<BASE>_<QUOTE>.mids``, a 16-byte header (``TTMIDS1`` + padding) then records of three
little-endian float64 — epoch seconds, bid, ask (the mid and spread are derived). A torn last
record (a crash mid-write) is ignored on reading; times out of order (two writers) are dropped.

Bound: a file keeps at most ``max_points`` records (default 24 h of 1 s samples); when it
holds ``1.5 × max_points`` it is rewritten with the latest ``max_points`` (atomically, via a
temporary file and ``os.replace``). Privacy: the folder is created 0700 and each file 0600.

Off the hot path: ``record`` only conflates in memory (the last sample of each second wins);
``flush`` hands the finished seconds to one writer thread, so a tick never waits on the disk.
At most one flush interval of samples is lost in a crash. Values are plot coordinates (floats),
never money.

Looking a moment up (the blotter's mid at fill): ``nearest`` finds the sample nearest
to given times; ``stored_price`` turns a stored float back into the Decimal price it was made
from (its shortest ``repr``: exact for prices of up to 15 significant digits, which every
pair's price increment gives). ``history_of`` hands a reader the store open on a folder in
this process (the chart's), so samples not yet written to disk are seen too.
"""

from __future__ import annotations

import os
import stat
import threading
import weakref
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

MAGIC = b"TTMIDS1\0" + bytes(8)
HEADER = len(MAGIC)
RECORD = np.dtype("<f8")
COLUMNS = 3  # time, bid, ask
WIDTH = RECORD.itemsize * COLUMNS  # bytes per record
#: 24 hours of one sample a second.
MAX_POINTS = 86_400


def file_name(pair: str) -> str:
    """``BTC/USD`` -> ``BTC_USD.mids`` (pair codes are letters and digits)."""
    safe = "".join(c if c.isalnum() else "_" for c in pair)
    return f"{safe}.mids"


class MidHistory:
    """The store of one environment's chart history (one folder)."""

    def __init__(self, folder: Path, *, max_points: int = MAX_POINTS) -> None:
        self.folder = folder
        self.max_points = max_points
        # Seconds not yet handed to the writer: pair -> [(second, time, bid, ask)], last open.
        self._pending: dict[str, list[tuple[float, float, float, float]]] = {}
        self._writing: dict[str, list[tuple[float, float, float]]] = {}
        self._lock = threading.Lock()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chart-history")
        self._closed = False
        _OPEN[folder] = self

    # -- the GUI thread -------------------------------------------------------------------------

    def record(self, pair: str, at: float, bid: float, ask: float) -> None:
        """One tick; the last of each second is kept (a few microseconds, no I/O)."""
        if self._closed:
            return
        second = float(int(at))
        samples = self._pending.setdefault(pair, [])
        if samples and samples[-1][0] == second:
            samples[-1] = (second, at, bid, ask)
        elif not samples or second > samples[-1][0]:
            samples.append((second, at, bid, ask))

    def flush(self, *, everything: bool = False) -> Future[None] | None:
        """Hand the finished seconds (all with ``everything``) to the writer thread."""
        batch: dict[str, list[tuple[float, float, float]]] = {}
        for pair, samples in self._pending.items():
            done = samples if everything else samples[:-1]
            if done:
                batch[pair] = [(at, bid, ask) for _, at, bid, ask in done]
                self._pending[pair] = [] if everything else samples[-1:]
        if not batch or self._closed:
            return None
        with self._lock:
            for pair, rows in batch.items():
                self._writing.setdefault(pair, []).extend(rows)
        try:
            return self._writer.submit(self._write, batch)
        except RuntimeError:  # the interpreter is exiting: write here, now
            self._write(batch)
            return None

    def read(self, pair: str, *, last: int | None = None) -> FloatArray:
        """The latest ``max_points`` samples of ``pair``, oldest first, shape ``(3, n)``:
        what is on disk, then what is still on its way there. ``last``: only the file's last
        ``last`` records (at most one a second, so they cover at least the last ``last``
        seconds): the blotter's look-up of a fresh fill reads a few kilobytes, not a day."""
        # The queue first: a batch written meanwhile is then read twice (and deduplicated by
        # time), never missed.
        with self._lock:
            queued = list(self._writing.get(pair, ()))
        on_disk = _decode(_file_bytes(self.folder / file_name(pair), last))
        queued += [(at, bid, ask) for _, at, bid, ask in self._pending.get(pair, ())]
        rows = np.array(queued, dtype=np.float64).reshape(-1, COLUMNS).T
        data = np.concatenate([on_disk, rows], axis=1) if rows.size else on_disk
        return _increasing(data)[:, -self.max_points :]

    def close(self) -> None:
        """Write everything and stop the writer (waits for it: call at quit, not per tick)."""
        if self._closed:
            return
        self.flush(everything=True)
        self._closed = True
        self._writer.shutdown(wait=True)

    # -- the writer thread ----------------------------------------------------------------------

    def _write(self, batch: dict[str, list[tuple[float, float, float]]]) -> None:
        _private_folder(self.folder)
        for pair, rows in batch.items():
            path = self.folder / file_name(pair)
            body = np.asarray(rows, dtype=RECORD).tobytes()
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.fchmod(fd, 0o600)
                size = os.fstat(fd).st_size
                if size == 0:
                    body = MAGIC + body
                elif (size - HEADER) % WIDTH:  # a torn record (a crash): cut it off first
                    os.ftruncate(fd, size - (size - HEADER) % WIDTH)
                os.write(fd, body)
                size = os.fstat(fd).st_size
            finally:
                os.close(fd)
            with self._lock:
                queued = self._writing.get(pair, [])
                del queued[: len(rows)]
            if (size - HEADER) // WIDTH > self.max_points * 3 // 2:
                self._compact(path)

    def _compact(self, path: Path) -> None:
        data = _increasing(_decode(path.read_bytes()))[:, -self.max_points :]
        temporary = path.with_suffix(".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, MAGIC + np.ascontiguousarray(data.T, dtype=RECORD).tobytes())
        finally:
            os.close(fd)
        os.replace(temporary, path)


def _private_folder(folder: Path) -> None:
    """Create ``folder`` and its parent (``chart-history``) for this user only: 0700."""
    for level in (folder.parent, folder):
        if not level.is_dir():
            level.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(level, 0o700)  # whatever the umask
    if stat.S_IMODE(folder.stat().st_mode) != 0o700:
        os.chmod(folder, 0o700)


def _file_bytes(path: Path, last: int | None) -> bytes:
    """A store file's bytes: whole, or its header and its last ``last`` whole records."""
    try:
        if last is None:
            return path.read_bytes()
        with path.open("rb") as handle:
            header = handle.read(HEADER)
            records = max(0, (handle.seek(0, os.SEEK_END) - HEADER) // WIDTH)
            handle.seek(HEADER + max(0, records - last) * WIDTH)
            return header + handle.read(min(records, last) * WIDTH)
    except FileNotFoundError:
        return b""


def _decode(raw: bytes) -> FloatArray:
    """Records of a file's bytes, shape ``(3, n)``; a foreign header or torn tail is left out."""
    if len(raw) < HEADER or raw[:HEADER] != MAGIC:
        return np.zeros((COLUMNS, 0), dtype=np.float64)
    whole = (len(raw) - HEADER) // WIDTH * WIDTH
    flat = np.frombuffer(raw, dtype=RECORD, count=whole // RECORD.itemsize, offset=HEADER)
    return flat.reshape(-1, COLUMNS).T.astype(np.float64)


def _increasing(data: FloatArray) -> FloatArray:
    """Only samples later than every one before them (two writers, or a clock set back)."""
    if data.shape[1] < 2:
        return data
    times = data[0]
    before = np.maximum.accumulate(np.concatenate([[-np.inf], times[:-1]]))
    keep: FloatArray = data[:, times > before]
    return keep


# -- looking a moment up (the blotter's mid at fill) ---------------------------------------------

#: The newest store opened on each folder in this process (the chart's, which records the ticks).
_OPEN: weakref.WeakValueDictionary[Path, MidHistory] = weakref.WeakValueDictionary()


def history_of(folder: Path) -> MidHistory:
    """The store open on ``folder`` in this process (its samples still on their way to disk
    included), else a store that reads what is on disk. Ask again for each look-up rather than
    keeping the answer: a chart opened later takes over the folder."""
    store = _OPEN.get(folder)
    return store if store is not None else MidHistory(folder)


def stored_price(value: float) -> Decimal:
    """The Decimal price a stored float was made from (its shortest repr)."""
    return Decimal(repr(value))


def nearest(data: FloatArray, moments: Sequence[float], tolerance: float) -> list[int | None]:
    """For each of ``moments`` (epoch seconds), the column of ``data`` (``read``'s ``(3, n)``,
    times increasing) nearest to it in time, the earlier one on a tie; None when no sample is
    within ``tolerance`` seconds."""
    times = data[0]
    if times.size == 0:
        return [None] * len(moments)
    wanted = np.asarray(moments, dtype=np.float64)
    after = np.clip(np.searchsorted(times, wanted, side="left"), 0, times.size - 1)
    before = np.clip(after - 1, 0, times.size - 1)
    to_before = np.abs(wanted - times[before])
    to_after = np.abs(times[after] - wanted)
    pick = np.where(to_after < to_before, after, before)
    distance = np.minimum(to_before, to_after)
    return [
        int(column) if gap <= tolerance else None
        for column, gap in zip(pick.tolist(), distance.tolist(), strict=True)
    ]
