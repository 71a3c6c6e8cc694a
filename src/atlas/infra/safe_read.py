"""Reading a file someone else may have made (an export, a run folder, a cache entry) without being
steered by it.

``Path.read_text`` follows a link to ``/dev/zero`` and reads forever, blocks on a FIFO until a writer
appears, and loads a 10 GB file whole. ``read_limited`` opens without following a final symbolic link
and without blocking, accepts only a regular file, and reads at most ``max_bytes``; anything else is
one ``InvalidInputError`` that says what the file is and what to do.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

from atlas.core import jsonsafe
from atlas.errors import InvalidInputError

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def read_limited(
    path: str | Path, *, max_bytes: int, what: str = "file", follow_links: bool = False
) -> bytes:
    """The bytes of the regular file ``path`` (at most ``max_bytes``), or ``InvalidInputError``: a
    symbolic link (as the last part of the path; ``follow_links`` reads where a link of the user's own
    points, still only a regular file), a FIFO, a device, a folder or an oversized file."""
    p = Path(path)
    try:
        fd = os.open(p, _FLAGS if follow_links else _FLAGS | _NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InvalidInputError(
                f"{what} {p} is a symbolic link: it must be a plain file inside its folder; replace the "
                "link by the file it points to (or get the folder again)"
            ) from exc
        raise InvalidInputError(f"cannot read {what} {p}: {exc.strerror or exc}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InvalidInputError(
                f"{what} {p} is not a regular file (a FIFO, device or folder): replace it by the file itself"
            )
        if st.st_size > max_bytes:
            raise InvalidInputError(f"{what} {p} is {st.st_size:,} bytes, over the limit of {max_bytes:,}")
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:  # grew while being read
            raise InvalidInputError(f"{what} {p} is over the limit of {max_bytes:,} bytes")
        return b"".join(chunks)
    except OSError as exc:
        raise InvalidInputError(f"cannot read {what} {p}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)


def read_json(path: str | Path, *, max_bytes: int, what: str = "file") -> Any:
    """``read_limited`` then ``jsonsafe.loads``: one ``InvalidInputError`` for a file that is not a
    plain file within the cap, or not JSON within the nesting limit."""
    return jsonsafe.loads(read_limited(path, max_bytes=max_bytes, what=what), what=str(path))


__all__ = ["read_json", "read_limited"]
