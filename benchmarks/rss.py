"""Resident-memory figures of this process for the benchmarks (Linux /proc, else getrusage).

``ru_maxrss`` of a process started by subprocess carries the parent's peak over the exec, so the peak is
read from VmHWM (the same high-water mark, for this process only) after resetting it to the current RSS
through /proc/self/clear_refs.
"""

from __future__ import annotations

import resource
from pathlib import Path


def _status_kib(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _maxrss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def reset_peak_rss() -> int:
    """Reset the peak-RSS high-water mark where Linux allows it; return the current RSS in bytes."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass
    rss = _status_kib("VmRSS")
    return rss * 1024 if rss is not None else _maxrss()


def peak_rss() -> int:
    """The peak RSS in bytes since the last :func:`reset_peak_rss`."""
    hwm = _status_kib("VmHWM")
    return hwm * 1024 if hwm is not None else _maxrss()
