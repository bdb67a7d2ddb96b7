"""S07, S11: the host's one reader of store, key and record files never waits and never reads
anything but a regular file — on real FIFOs, sockets, directories and devices."""

from __future__ import annotations

import errno
import os
import pathlib

import pytest

from robota.host.store._regular_file import (
    NotRegularFileError,
    open_regular_file,
    read_regular_file,
)
from special_files import PLANTABLE_KINDS, finishes, plant, planted_fifos


@pytest.mark.parametrize("kind", PLANTABLE_KINDS)
def test_s07_read_regular_file_refuses_every_special_file_without_hanging(
    tmp_path: pathlib.Path, kind: str
) -> None:
    path = tmp_path / "planted"
    plant(path, kind)
    with pytest.raises(OSError, match="not a regular file"):
        finishes(lambda: read_regular_file(str(path)), fifos=planted_fifos(path, kind))


@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero"])
def test_s07_read_regular_file_refuses_a_device_without_reading_it(device: str) -> None:
    # /dev/zero never ends: reading it would fill memory. Refused from the descriptor's type.
    with pytest.raises(OSError, match="not a regular file"):
        finishes(lambda: read_regular_file(device))


def test_s07_read_regular_file_reads_a_file_whole_or_up_to_a_limit(
    tmp_path: pathlib.Path,
) -> None:
    path = tmp_path / "record"
    path.write_bytes(b"x" * 200_000)
    assert read_regular_file(str(path)) == b"x" * 200_000
    assert read_regular_file(str(path), limit=10) == b"x" * 10
    assert read_regular_file(str(tmp_path / "absent")) is None
    flags = []
    real_read = os.read

    def watching_read(fd: int, size: int) -> bytes:
        flags.append(os.get_blocking(fd))
        return real_read(fd, size)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "read", watching_read)
        read_regular_file(str(path))
    assert flags
    assert all(flags)  # O_NONBLOCK is only for the open, never for the reads


def test_s07_a_symlink_is_refused_not_followed(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "target"
    target.write_bytes(b"elsewhere")
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(OSError) as caught:  # noqa: PT011 - the errno is checked below
        read_regular_file(str(tmp_path / "link"))
    assert caught.value.errno == errno.ELOOP  # O_NOFOLLOW: refused, never followed
    assert not isinstance(caught.value, NotRegularFileError)


def test_s07_the_descriptor_handed_back_is_blocking_and_closed_on_exec(
    tmp_path: pathlib.Path,
) -> None:
    path = tmp_path / "record"
    path.write_bytes(b"x")
    opened = open_regular_file(str(path))
    assert opened is not None
    fd, info = opened
    try:
        assert os.get_blocking(fd)
        assert not os.get_inheritable(fd)
        assert info.st_size == 1
    finally:
        os.close(fd)
    assert open_regular_file(str(tmp_path / "absent")) is None
