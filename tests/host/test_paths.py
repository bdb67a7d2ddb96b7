"""S05 path containment, on the real file system: the answer is where the system call lands.

Every verdict is checked against what the kernel does with the same path (``os.stat``/``os.open``
follow the same links), never against another lexical computation.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pathlib
import re
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from robota.host import canonical_path, is_path_inside
from robota.host.paths import _paths

LINUX = sys.platform.startswith("linux")


def identity(path: str | os.PathLike[str]) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_dev, info.st_ino


@pytest.fixture
def tree(tmp_path: pathlib.Path) -> pathlib.Path:
    """``ws`` (the root) beside ``outside``; ``ws`` holds a file, a directory and two links."""
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("print(1)\n")
    (root / "file.txt").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("s")
    (root / "escape").symlink_to(outside)  # absolute, pointing out
    (root / "up").symlink_to("../outside")  # relative, pointing out
    return root


# --------------------------------------------------------------------------- refused input


@pytest.mark.parametrize("candidate", ["", "a\x00b", "src/\x00", "/\x00"])
def test_s05_empty_and_nul_candidates_are_not_inside(tree: pathlib.Path, candidate: str) -> None:
    assert not is_path_inside(tree, candidate)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("", "empty"),
        ("/tmp/a\x00b", "NUL"),
        ("relative/path", "absolute"),
        (".", "absolute"),
    ],
)
def test_s05_canonical_path_refuses_empty_nul_and_relative_paths(path: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        canonical_path(path)


def test_s05_a_containment_root_must_be_an_existing_absolute_directory(
    tree: pathlib.Path,
) -> None:
    with pytest.raises(ValueError, match="absolute"):
        is_path_inside("relative", "x")
    with pytest.raises(ValueError, match="existing directory"):
        is_path_inside(tree / "file.txt", "x")
    with pytest.raises(ValueError, match="empty"):
        is_path_inside("", "x")


# --------------------------------------------------------------------------- escapes


@pytest.mark.parametrize(
    "candidate",
    ["..", "../outside/secret", "src/../../outside", "src/../..", "./../ws/../outside"],
)
def test_s05_dotdot_escapes_are_not_inside(tree: pathlib.Path, candidate: str) -> None:
    assert not is_path_inside(tree, candidate)
    assert not is_path_inside(tree, os.path.join(tree, candidate))


@pytest.mark.parametrize(
    "candidate", ["escape", "escape/secret", "up/secret", "escape/not-yet-created", "src/../up"]
)
def test_s05_a_symlink_inside_pointing_out_is_not_inside(
    tree: pathlib.Path, candidate: str
) -> None:
    assert not is_path_inside(tree, candidate)
    assert canonical_path(os.path.join(tree, candidate)).startswith(str(tree.parent / "outside"))


def test_s05_a_dangling_symlink_is_judged_by_where_creating_through_it_lands(
    tree: pathlib.Path,
) -> None:
    (tree / "plant").symlink_to(tree.parent / "outside" / "planted")
    (tree / "draft").symlink_to("src/draft.txt")
    assert not is_path_inside(tree, "plant")
    assert is_path_inside(tree, "draft")
    # What the system call does with them: O_CREAT follows the dangling link.
    os.close(os.open(tree / "plant", os.O_CREAT | os.O_WRONLY, 0o600))
    os.close(os.open(tree / "draft", os.O_CREAT | os.O_WRONLY, 0o600))
    assert (tree.parent / "outside" / "planted").exists()
    assert (tree / "src" / "draft.txt").exists()


def test_s05_a_link_that_lands_inside_is_inside_however_it_is_spelled(
    tree: pathlib.Path,
) -> None:
    (tree / "abs").symlink_to(tree / "src")  # absolute, pointing in
    (tree / "detour").symlink_to("../ws/src")  # leaves the root and comes back
    (tree.parent / "outside" / "in").symlink_to(tree / "src")  # a way in from outside
    for candidate in ("abs/a.py", "detour/a.py", str(tree.parent / "outside" / "in" / "a.py")):
        assert is_path_inside(tree, candidate), candidate
        assert identity(canonical_path(os.path.join(tree, candidate))) == identity(
            tree / "src" / "a.py"
        )


def test_s05_the_root_itself_and_a_differently_spelled_root_are_handled(
    tree: pathlib.Path,
) -> None:
    alias = tree.parent / "alias"
    alias.symlink_to(tree)
    assert is_path_inside(tree, ".")
    assert is_path_inside(tree, str(tree))
    assert is_path_inside(alias, "src/a.py")
    assert is_path_inside(alias, str(tree / "src"))
    assert is_path_inside(tree, str(alias / "src"))
    assert not is_path_inside(alias, "escape")


# --------------------------------------------------------------------------- resolution failures


def test_s05_a_symlink_loop_is_refused(tree: pathlib.Path) -> None:
    (tree / "loop1").symlink_to("loop2")
    (tree / "loop2").symlink_to("loop1")
    (tree / "self").symlink_to("self/x")
    for name in ("loop1", "loop1/x", "self"):
        with pytest.raises(OSError, match="symbolic links") as caught:
            os.stat(tree / name)
        assert caught.value.errno == errno.ELOOP  # what the kernel says
        with pytest.raises(OSError, match="symbolic links") as ours:
            canonical_path(str(tree / name))
        assert ours.value.errno == errno.ELOOP
        assert not is_path_inside(tree, name)


@pytest.mark.skipif(not LINUX, reason="the limit of 40 links is Linux's (MAXSYMLINKS)")
def test_s05_more_symlinks_than_the_kernel_follows_is_refused(tree: pathlib.Path) -> None:
    (tree / "l0").symlink_to("src")
    for i in range(1, 41):
        (tree / f"l{i}").symlink_to(f"l{i - 1}")
    # l39 needs 40 links (the kernel follows it), l40 needs 41 (the kernel refuses).
    assert identity(tree / "l39") == identity(tree / "src")
    assert identity(canonical_path(str(tree / "l39"))) == identity(tree / "src")
    assert is_path_inside(tree, "l39/a.py")
    with pytest.raises(OSError, match="symbolic links") as kernel:
        os.stat(tree / "l40")
    assert kernel.value.errno == errno.ELOOP
    with pytest.raises(OSError, match="more than 40 symbolic links") as ours:
        canonical_path(str(tree / "l40"))
    assert ours.value.errno == errno.ELOOP
    assert not is_path_inside(tree, "l40/a.py")


@pytest.mark.parametrize("candidate", ["file.txt/x", "file.txt/..", "file.txt/", "file.txt/."])
def test_s05_a_file_used_as_a_directory_is_refused(tree: pathlib.Path, candidate: str) -> None:
    with pytest.raises(NotADirectoryError):
        os.stat(os.path.join(tree, candidate))
    assert os.path.realpath(os.path.join(tree, "file.txt/..")) == str(tree)  # the lexical guess
    with pytest.raises(NotADirectoryError):
        canonical_path(os.path.join(tree, candidate))
    assert not is_path_inside(tree, candidate)


NAME = "d" * 200
PER_HOP = 4


def _build_past_path_max(base: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path, str]:
    """A root whose real depth passes PATH_MAX, reached by short hops; at the bottom, ``esc``.

    ``ws/h`` → ``d…/d…/d…/d…`` (four 200-character directories), and in the fourth one another
    ``h`` → four more, and so on past ``PATH_MAX``; the deepest directory holds ``esc``, a link
    that climbs one level more than the depth: out of ``ws``, into ``outside``. The candidate
    ``ws/h/h/…/esc/secret`` is short. Built through directory descriptors, because no path to
    the bottom fits in ``PATH_MAX``.
    """
    root, outside = base / "ws", base / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret").write_text("s")
    hops = _paths._PATH_MAX // ((len(NAME) + 1) * PER_HOP) + 2
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    depth = 0
    try:
        for _ in range(hops):
            os.symlink("/".join([NAME] * PER_HOP), "h", dir_fd=fd)
            for _ in range(PER_HOP):
                os.mkdir(NAME, dir_fd=fd)
                deeper = os.open(NAME, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                os.close(fd)
                fd = deeper
                depth += 1
        os.symlink("../" * (depth + 1) + "outside", "esc", dir_fd=fd)
    finally:
        os.close(fd)
    return root, outside, os.path.join(root, *(["h"] * hops), "esc", "secret")


def test_s05_a_resolution_past_path_max_is_not_turned_into_inside(tmp_path: pathlib.Path) -> None:
    root, outside, candidate = _build_past_path_max(tmp_path)
    # The old bug: non-strict realpath gives up past PATH_MAX and carries on lexically ...
    assert os.path.realpath(candidate, strict=False).startswith(f"{root}/")
    # ... while the system call follows every link and lands outside.
    assert identity(candidate) == identity(outside / "secret")
    with pytest.raises(OSError, match="PATH_MAX") as caught:
        canonical_path(candidate)
    assert caught.value.errno == errno.ENAMETOOLONG
    assert not is_path_inside(root, candidate)
    assert not is_path_inside(root, os.path.relpath(candidate, root))


@contextlib.contextmanager
def _without_search_permission(directory: pathlib.Path) -> Iterator[None]:
    """Run the body unable to search ``directory``: as root, with another effective user id."""
    if os.geteuid() != 0:
        directory.chmod(0)
        try:
            yield
        finally:
            directory.chmod(0o700)
        return
    try:
        os.seteuid(65534)  # root bypasses permission bits; "nobody" does not
    except OSError as exc:  # pragma: no cover - a container without CAP_SETUID
        pytest.skip(f"this sub-case needs a user that cannot search a directory: {exc}")
    try:
        yield
    finally:
        os.seteuid(0)


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_s05_a_directory_that_cannot_be_searched_is_refused() -> None:
    # Not under tmp_path: as another user the base itself must be searchable.
    with tempfile.TemporaryDirectory() as made:
        base = pathlib.Path(made)
        base.chmod(0o755)
        root = base / "ws"
        locked = root / "locked"
        locked.mkdir(parents=True, mode=0o700)
        root.chmod(0o755)
        (base / "outside").mkdir()
        (locked / "x").symlink_to(base / "outside")
        candidate = str(locked / "x" / "secret")
        with _without_search_permission(locked):
            # The old bug: realpath cannot see that x is a link out, and guesses "inside".
            assert os.path.realpath(candidate, strict=False).startswith(f"{root}/")
            with pytest.raises(PermissionError):
                canonical_path(candidate)
            assert not is_path_inside(root, "locked/x/secret")
            assert not is_path_inside(root, "locked/anything")
            assert is_path_inside(root, "other")  # the rest of the root is still judged


# --------------------------------------------------------------------------- files to be created


@pytest.mark.parametrize("candidate", ["new.txt", "src/new.txt", "new/dirs/below/file", "src/"])
def test_s05_a_path_to_be_created_inside_is_inside(tree: pathlib.Path, candidate: str) -> None:
    assert is_path_inside(tree, candidate)
    expected = os.path.normpath(os.path.join(tree, candidate))
    assert canonical_path(os.path.join(tree, candidate)) == expected


@pytest.mark.parametrize(
    "candidate", ["missing/../../outside/x", "missing/../x", "a/b/../../..", "escape/new/../x"]
)
def test_s05_dotdot_after_a_missing_component_is_refused(
    tree: pathlib.Path, candidate: str
) -> None:
    assert not is_path_inside(tree, candidate)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        canonical_path(os.path.join(tree, candidate))


# --------------------------------------------------------------------------- the kernel's answer


@pytest.mark.skipif(_paths._openat2() is None, reason="openat2(2) is not available here")
def test_s05_on_linux_the_kernel_must_agree(tree: pathlib.Path) -> None:
    # /proc/self/root is a magic link: readlink says "/", so the resolver lands inside, but the
    # kernel refuses it under RESOLVE_NO_MAGICLINKS: both must say "inside", so it is not.
    (tree / "magic").symlink_to(f"/proc/self/root{tree}/src")
    assert canonical_path(str(tree / "magic")) == str(tree / "src")
    assert not is_path_inside(tree, "magic/a.py")
    assert is_path_inside(tree, "src/a.py")


def test_s05_without_openat2_the_resolver_decides_alone(
    tree: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    def refused(dir_fd: int, path: str, resolve: int) -> tuple[int, int]:
        calls.append(path)
        return errno.ENOSYS, -1  # an older kernel, or a seccomp filter

    monkeypatch.setattr(_paths, "_openat2", lambda: refused)
    monkeypatch.setattr(_paths, "_KERNEL_REFUSED", set())
    assert is_path_inside(tree, "src/a.py")
    assert calls  # it was asked once ...
    asked = len(calls)
    assert is_path_inside(tree, "src/new.txt")
    assert not is_path_inside(tree, "escape/secret")
    assert not is_path_inside(tree, "missing/../x")
    assert len(calls) == asked  # ... and not again in this process


# --------------------------------------------------------------------------- generated trees

_NAMES = ("a", "b", "c")
_rel_names = st.lists(st.sampled_from(_NAMES), min_size=1, max_size=2)
_link_target = st.one_of(
    st.builds(
        lambda ups, names: "/".join([".."] * ups + names) or ".",
        st.integers(0, 4),
        st.lists(st.sampled_from((*_NAMES, ".", "..")), max_size=3),
    ),
    st.tuples(st.sampled_from(("ws", "out")), st.lists(st.sampled_from(_NAMES), max_size=2)),
)
_entry = st.tuples(
    st.sampled_from(("ws", "out")),
    _rel_names,
    st.one_of(st.sampled_from(("dir", "dir", "file")), _link_target),
)
_candidate = st.tuples(
    st.sampled_from(("relative", "absolute", "via-out")),
    st.lists(st.sampled_from((*_NAMES, *_NAMES, "..", ".", "new", "")), min_size=1, max_size=4),
)


def _make_tree(base: str, entries: list[Any]) -> None:
    real_dirs = {os.path.join(base, "ws"), os.path.join(base, "out")}
    for top, names, kind in sorted(entries, key=lambda e: len(e[1])):
        path = os.path.join(base, top, *names)
        if os.path.dirname(path) not in real_dirs or os.path.lexists(path):
            continue  # only ever create beneath a real directory, never through a link
        if kind == "dir":
            os.mkdir(path)
            real_dirs.add(path)
        elif kind == "file":
            pathlib.Path(path).write_text("f")
        elif isinstance(kind, str):
            os.symlink(kind, path)
        else:
            os.symlink(os.path.join(base, kind[0], *kind[1]), path)


def _inside_ids(root: str) -> set[tuple[int, int]]:
    found = {identity(root)}
    for directory, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            info = os.lstat(os.path.join(directory, name))
            found.add((info.st_dev, info.st_ino))
    return found


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(entries=st.lists(_entry, min_size=4, max_size=24), candidate=_candidate)
def test_s05_the_verdict_is_where_the_system_call_lands(
    entries: list[Any], candidate: tuple[str, list[str]]
) -> None:
    with tempfile.TemporaryDirectory() as made:
        base = os.path.realpath(made)
        root = os.path.join(base, "ws")
        os.mkdir(root)
        os.mkdir(os.path.join(base, "out"))
        _make_tree(base, entries)
        style, parts = candidate
        text = "/".join(parts)
        if style == "absolute":
            text = os.path.join(root, text)
        elif style == "via-out":
            text = os.path.join(base, "out", text)
        if not text:
            assert not is_path_inside(root, text)
            return
        target = os.path.join(root, text)
        verdict = is_path_inside(root, text)
        try:
            landed = identity(target)
        except OSError as exc:
            kernel_errno = exc.errno
        else:
            kernel_errno = None
        if kernel_errno is None:
            # The path exists: the canonical path is the very file the kernel opens, and the
            # verdict is whether that file lives in the root's tree.
            event("exists")
            assert identity(canonical_path(target)) == landed
            assert verdict == (landed in _inside_ids(root))
        elif kernel_errno == errno.ENOENT:
            event("missing")
            if verdict:
                # Creating it lands inside (when its directory exists for the kernel).
                try:
                    fd = os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
                except OSError:
                    return
                created = os.fstat(fd)
                os.close(fd)
                assert (created.st_dev, created.st_ino) in _inside_ids(root)
        else:
            # ELOOP, ENOTDIR, ENAMETOOLONG …: the kernel cannot get there; neither can we.
            event(f"refused: {errno.errorcode.get(kernel_errno, kernel_errno)}")
            assert not verdict
            # The same failure, not only some failure: the message starts with its strerror.
            with pytest.raises(OSError, match=re.escape(os.strerror(kernel_errno))):
                canonical_path(target)


def test_s05_a_path_no_system_call_can_be_given_is_not_inside(tmp_path: pathlib.Path) -> None:
    # Regression (issue 10 review): a lone surrogate raised UnicodeEncodeError.
    assert not is_path_inside(tmp_path, "\ud800")
    assert not is_path_inside(tmp_path, f"{tmp_path}/\ud800")
    with pytest.raises(ValueError, match="encoded"):
        canonical_path(f"{tmp_path}/\ud800")


def test_s05_a_name_past_name_max_is_not_inside(tmp_path: pathlib.Path) -> None:
    # The kernel refuses such a name (ENAMETOOLONG) whether or not the file exists.
    assert not is_path_inside(tmp_path, "missing/" + "a" * 300)
    assert not is_path_inside(tmp_path, "a" * 300)
    assert is_path_inside(tmp_path, "a" * 255)
