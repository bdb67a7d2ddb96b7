"""Commands that run another command, and the options each accepts (S12).

Written from the manuals of GNU coreutils (``env``, ``nice``, ``nohup``, ``stdbuf``,
``timeout``), sudo(8), doas(1), util-linux (``setsid``, ``ionice``, ``chrt``), GNU findutils
(``xargs``), GNU time and bash's builtins (``command``, ``exec``, ``builtin``, ``time``,
``coproc``). The table is an allow-list: an option it does not name makes the line *opaque*,
because an unknown option may take a value (and so move where the command starts) or change what
runs. Options after which no plain command follows (``sudo -s``, ``env -S``) are listed apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, final

__all__ = ["WRAPPERS", "XARGS", "WrapperOptions", "WrapperScan", "scan_wrapper"]

_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


@final
@dataclass(frozen=True, slots=True)
class WrapperOptions:
    """What one wrapper accepts before the command it runs.

    Attributes:
        flags: Options without a value.
        valued: Options that take a value (``-u NAME``, ``-uNAME``, ``--user=NAME``).
        hides_command: Options after which the remaining words are not a plain command
            (a shell is started, a string is split, a pid is named instead).
        numeric_flags: ``-N`` for a number is an option (``nice -5 cmd``).
        positional: Operands between the options and the command (``timeout``'s duration).
        glued: Options whose value is optional and, when given, glued to it (``xargs -i{}``,
            ``--replace=R``): the next word is never their value.
        chdir: Options that run the command in another directory (``env -C``, ``sudo -D``).
        script: Options whose value is a shell command line (``su -c``, ``flock -c``).
        assignments: ``NAME=value`` words before the command are its environment.
        dash_is_flag: A lone ``-`` is an option (``env -`` is ``env -i``).
        moves: The command always runs elsewhere (``chroot``'s new root).
        any_long: Every ``--name`` or ``--name=value`` word is one option (``firejail``,
            ``valgrind``): such a wrapper never takes the next word as a value.
        script_operands: The words after the options are joined into one shell line that the
            wrapper hands to ``sh -c`` (``sg group 'cmd'``).
        command_flag: Options without one of which no command follows (``jobs -x cmd``: the
            words after ``jobs`` alone are job specifications).
        shell_without_command: Given no command, it starts a shell, which reads its standard
            input as a script (``su``, ``chroot /srv``, ``fakeroot``).
    """

    flags: frozenset[str] = frozenset()
    valued: frozenset[str] = frozenset()
    hides_command: frozenset[str] = frozenset()
    numeric_flags: bool = False
    positional: int = 0
    glued: frozenset[str] = frozenset()
    chdir: frozenset[str] = frozenset()
    script: frozenset[str] = frozenset()
    assignments: bool = False
    dash_is_flag: bool = False
    moves: bool = False
    any_long: bool = False
    script_operands: bool = False
    command_flag: frozenset[str] = frozenset()
    shell_without_command: bool = False


@final
@dataclass(frozen=True, slots=True)
class WrapperScan:
    """What :func:`scan_wrapper` read.

    Attributes:
        start: Where the wrapped command starts in the words after the wrapper's name (``-1``:
            none follows).
        assignments: The ``NAME=value`` words handed to it as its environment.
        unknown: An option was not recognised, or hides the command.
        moved: The command runs in another directory than the line's.
        scripts: Values of options that are shell command lines.
        options: Each option read, with its value when it has one (``("-I", "{}")``).
        assignment_positions: Where each of :attr:`assignments` stands in the words.
    """

    start: int
    assignments: tuple[str, ...] = ()
    unknown: bool = False
    moved: bool = False
    scripts: tuple[str, ...] = ()
    options: tuple[tuple[str, str | None], ...] = ()
    assignment_positions: tuple[int, ...] = ()


WRAPPERS: Final = {
    "env": WrapperOptions(
        flags=_names("-i --ignore-environment -0 --null -v --debug"),
        valued=_names("-u --unset -C --chdir"),
        hides_command=_names("-S --split-string"),
        chdir=_names("-C --chdir"),
        assignments=True,
        dash_is_flag=True,
    ),
    "sudo": WrapperOptions(
        flags=_names(
            "-A --askpass -b --background -E --preserve-env -H --set-home -k --reset-timestamp"
            " -n --non-interactive -P --preserve-groups -S --stdin -B --bell -N --no-update"
        ),
        valued=_names(
            "-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role"
            " -t --type -U --other-user -T --command-timeout -R --chroot"
        ),
        hides_command=_names(
            "-s --shell -i --login -e --edit -l --list -v --validate -K --remove-timestamp"
            " -V --version"
        ),
        chdir=_names("-D --chdir -R --chroot"),
        assignments=True,
    ),
    "doas": WrapperOptions(
        flags=_names("-n -L"), valued=_names("-u -C"), hides_command=_names("-s")
    ),
    "nice": WrapperOptions(valued=_names("-n --adjustment"), numeric_flags=True),
    "nohup": WrapperOptions(),
    "setsid": WrapperOptions(flags=_names("-c --ctty -f --fork -w --wait")),
    "stdbuf": WrapperOptions(valued=_names("-i --input -o --output -e --error")),
    "ionice": WrapperOptions(
        flags=_names("-t --ignore"),
        valued=_names("-c --class -n --classdata"),
        hides_command=_names("-p --pid -P --pgid -u --uid"),
    ),
    "chrt": WrapperOptions(
        flags=_names(
            "-a --all-tasks -b --batch -d --deadline -e --ext -f --fifo -i --idle -o --other"
            " -r --rr -R --reset-on-fork -v --verbose"
        ),
        valued=_names("-T --sched-runtime -P --sched-period -D --sched-deadline"),
        hides_command=_names("-p --pid -m --max"),
        positional=1,
    ),
    "timeout": WrapperOptions(
        flags=_names("--foreground --preserve-status -v --verbose -f -p"),
        valued=_names("-s --signal -k --kill-after"),
        positional=1,
    ),
    "command": WrapperOptions(flags=_names("-p -v -V")),
    "exec": WrapperOptions(flags=_names("-c -l"), valued=_names("-a")),
    "builtin": WrapperOptions(),
    "time": WrapperOptions(
        flags=_names("-p -a --append -q --quiet -v --verbose --portability"),
        valued=_names("-f --format -o --output"),
    ),
    # util-linux, coreutils and others that run a command: taskset(1), flock(1), chroot(8),
    # unshare(1), nsenter(1), setpriv(1), script(1), su(1), runuser(1), pkexec(1), watch(1),
    # strace(1), ltrace(1), busybox(1).
    "taskset": WrapperOptions(
        flags=_names("-a --all-tasks -c --cpu-list"), hides_command=_names("-p --pid"), positional=1
    ),
    "flock": WrapperOptions(
        flags=_names(
            "-s --shared -x -e --exclusive -u --unlock -n --nb --nonblock -o --close -F"
            " --no-fork --verbose"
        ),
        valued=_names("-w --wait --timeout -E --conflict-exit-code"),
        script=_names("-c --command"),
        positional=1,
    ),
    "chroot": WrapperOptions(
        flags=_names("--skip-chdir"),
        valued=_names("--userspec --groups"),
        positional=1,
        moves=True,
        shell_without_command=True,
    ),
    "unshare": WrapperOptions(
        flags=_names(
            "-m -u -i -n -p -U -C -T -f --fork -r --map-root-user --map-current-user --mount-proc"
            " --kill-child --propagation --keep-caps"
        ),
        valued=_names("-S --setuid -G --setgid -R --root -w --wd"),
        chdir=_names("-R --root -w --wd"),
        shell_without_command=True,
    ),
    "nsenter": WrapperOptions(
        flags=_names("-a --all -m -u -i -n -p -U -C -T -F --no-fork --preserve-credentials"),
        valued=_names("-t --target -S --setuid -G --setgid -r --root -w --wd"),
        chdir=_names("-r --root -w --wd"),
        shell_without_command=True,
    ),
    "setpriv": WrapperOptions(
        flags=_names("--clear-groups --keep-groups --init-groups --no-new-privs --reset-env"),
        valued=_names(
            "--reuid --regid --ruid --euid --rgid --egid --groups --inh-caps --ambient-caps"
            " --bounding-set --securebits --pdeathsig --selinux-label --apparmor-profile"
        ),
    ),
    "script": WrapperOptions(
        flags=_names("-a --append -e --return -f --flush -q --quiet"),
        valued=_names("-E --echo -I --log-in -O --log-out -B --log-io -T --log-timing"),
        script=_names("-c --command"),
        hides_command=_names("-h --help"),
        shell_without_command=True,
    ),
    "su": WrapperOptions(
        flags=_names("-l --login -m -p --preserve-environment -P --pty"),
        valued=_names("-g --group -G --supp-group -s --shell -w --whitelist-environment"),
        script=_names("-c --command --session-command"),
        dash_is_flag=True,
        positional=1,  # the user; what follows is handed to the user's shell
        shell_without_command=True,
    ),
    "runuser": WrapperOptions(
        flags=_names("-l --login -m -p --preserve-environment"),
        valued=_names("-u --user -g --group -G --supp-group -s --shell"),
        script=_names("-c --command --session-command"),
        shell_without_command=True,
    ),
    "pkexec": WrapperOptions(
        flags=_names("--disable-internal-agent"),
        valued=_names("--user"),
        shell_without_command=True,
    ),
    "watch": WrapperOptions(
        flags=_names(
            "-b --beep -c --color -C --no-color -d --differences -e --errexit -g --chgexit -p"
            " --precise -t --no-title -w --no-wrap -x --exec"
        ),
        valued=_names("-n --interval -q --equexit"),
        script_operands=True,  # run through `sh -c` (with -x, exec'd: the same words)
    ),
    # ssh(1), OpenSSH 9: the words after the destination are joined into one line the remote
    # shell runs; `-o ProxyCommand=…` and the like run locally (see _executing).
    "ssh": WrapperOptions(
        flags=_names("-4 -6 -A -a -C -f -G -g -K -k -M -n -q -T -t -V -v -X -x -Y -y"),
        valued=_names("-B -b -c -D -E -e -F -I -i -J -L -l -m -O -o -P -p -Q -R -S -w"),
        hides_command=_names("-N -s -W"),
        positional=1,  # the destination
        script_operands=True,
        moves=True,
        shell_without_command=True,  # the remote login shell reads standard input
    ),
    "strace": WrapperOptions(
        flags=_names("-f -ff -c -C -q -qq -r -t -tt -ttt -T -v -x -xx -y -yy -k -n -w -Z -z"),
        valued=_names("-e -o -s -S -u -E -a -X -b -I"),
        hides_command=_names("-p"),
    ),
    "ltrace": WrapperOptions(
        flags=_names("-b -c -C -f -i -L -r -S -t -tt -ttt -T -w"),
        valued=_names("-a -A -D -e -F -l -n -o -s -u -x"),
        hides_command=_names("-p"),
    ),
    "busybox": WrapperOptions(),
    # Issue 24: wrappers that change how a command runs, from their manuals — fakeroot(1),
    # faketime(1) (libfaketime 0.9), eatmydata(1), prlimit(1) and setarch(8) (util-linux
    # 2.38), systemd-run(1) (systemd 252), xvfb-run(1) (Debian), torsocks(1), sg(1) (shadow),
    # proxychains4, firejail(1), valgrind(1), catchsegv, unbuffer(1) (expect),
    # dbus-run-session(1), gosu, su-exec, nocache, ssh-agent(1), chpst(8) (runit), numactl(8),
    # tini, dumb-init, caffeinate(8).
    "fakeroot": WrapperOptions(
        flags=_names("-u --unknown-is-real"),
        valued=_names("-l --lib --faked -i -s -b --fd-base"),
        hides_command=_names("-h --help -v --version"),
        shell_without_command=True,
    ),
    "faketime": WrapperOptions(
        flags=_names("-m -f --exclude-monotonic --disable-shm"),
        valued=_names("-p"),
        script=_names("--date-prog"),  # the program that reads the timestamp
        hides_command=_names("-h --help -v --version"),
        positional=1,  # the timestamp
    ),
    "eatmydata": WrapperOptions(hides_command=_names("-h --help --version")),
    "prlimit": WrapperOptions(
        flags=_names("--noheadings --raw --verbose"),
        valued=_names("-o --output"),
        glued=_names(
            "-c --core -d --data -e --nice -f --fsize -i --sigpending -l --memlock -m --rss"
            " -n --nofile -q --msgqueue -r --rtprio -s --stack -t --cpu -u --nproc -v --as"
            " -x --locks -y --rttime"
        ),
        hides_command=_names("-p --pid -h --help -V --version"),
    ),
    "setarch": WrapperOptions(
        flags=_names(
            "-B --32bit -F --fdpic-funcptrs -I --short-inode -L --addr-compat-layout"
            " -R --addr-no-randomize -S --whole-seconds -T --sticky-timeouts"
            " -X --read-implies-exec -Z --mmap-page-zero -3 --3gb --4gb --uname-2.6"
            " -v --verbose"
        ),
        hides_command=_names("--list -h --help -V --version"),
        positional=1,  # the architecture
        shell_without_command=True,  # /bin/sh
    ),
    "linux32": WrapperOptions(
        flags=_names("-B --32bit -R --addr-no-randomize -L --addr-compat-layout -3 --3gb -v"),
        shell_without_command=True,
    ),
    "linux64": WrapperOptions(
        flags=_names("-B --32bit -R --addr-no-randomize -L --addr-compat-layout -3 --3gb -v"),
        shell_without_command=True,
    ),
    "systemd-run": WrapperOptions(
        flags=_names(
            "--no-ask-password --scope --user --system -r --remain-after-exit --send-sighup"
            " -P --pipe -t --pty -T --pty-late -q --quiet -G --collect --wait -d --same-dir"
            " --no-block --ignore-failure --background"
        ),
        valued=_names(
            "-u --unit -p --property --description --slice --uid --gid --nice"
            " --working-directory -E --setenv -H --host -M --machine --on-active --on-boot"
            " --on-startup --on-unit-active --on-unit-inactive --on-calendar --timer-property"
            " --path-property --socket-property --service-type --expand-environment --json"
        ),
        hides_command=_names("-S --shell -h --help --version"),
        chdir=_names("--working-directory -H --host -M --machine"),
    ),
    "xvfb-run": WrapperOptions(
        flags=_names("-a --auto-servernum -d -l --listen-tcp"),
        valued=_names(
            "-e --error-file -f --auth-file -n --server-num -p --xauth-protocol -s"
            " --server-args -w --wait"
        ),
        hides_command=_names("-h --help"),
    ),
    "torsocks": WrapperOptions(
        flags=_names("-i --isolate -d --debug -q --quiet"),
        valued=_names("-u --user -p --pass -a --address -P --port"),
        hides_command=_names("--shell -h --help --version"),
    ),
    "sg": WrapperOptions(
        script=_names("-c"),
        dash_is_flag=True,
        positional=1,  # the group
        script_operands=True,
        shell_without_command=True,
    ),
    "proxychains": WrapperOptions(flags=_names("-q"), valued=_names("-f")),
    "proxychains4": WrapperOptions(flags=_names("-q"), valued=_names("-f")),
    "firejail": WrapperOptions(
        any_long=True, hides_command=_names("--help --version"), shell_without_command=True
    ),
    "valgrind": WrapperOptions(
        flags=_names("-q -v -s"), any_long=True, hides_command=_names("-h --help --version")
    ),
    "catchsegv": WrapperOptions(),
    "unbuffer": WrapperOptions(flags=_names("-p")),
    "dbus-run-session": WrapperOptions(
        valued=_names("--config-file"),
        script=_names("--dbus-daemon"),
        hides_command=_names("--help --version"),
    ),
    "gosu": WrapperOptions(positional=1, hides_command=_names("-h --help --version")),
    "su-exec": WrapperOptions(positional=1),
    "nocache": WrapperOptions(valued=_names("-n")),
    "ssh-agent": WrapperOptions(
        flags=_names("-c -s -D -d"),
        valued=_names("-a -E -O -P -t"),
        hides_command=_names("-k"),
    ),
    "chpst": WrapperOptions(
        flags=_names("-v -P -0 -1 -2"),
        valued=_names("-u -U -b -e -/ -C -n -l -L -m -d -o -p -f -c -r -t"),
        chdir=_names("-/ -C"),
    ),
    "numactl": WrapperOptions(
        flags=_names("-l --localalloc -a --all -b --balancing"),
        valued=_names(
            "-i --interleave -N --cpunodebind -C --physcpubind -m --membind -p --preferred"
            " -P --preferred-many -w --weighted-interleave"
        ),
        hides_command=_names("-H --hardware -s --show --length --offset --shm --file"),
    ),
    "tini": WrapperOptions(
        flags=_names("-s -v -vv -vvv -w -g -l"),
        valued=_names("-p -e"),
        hides_command=_names("-h --version"),
    ),
    "dumb-init": WrapperOptions(
        flags=_names("-c --single-child -v --verbose"),
        valued=_names("-r --rewrite"),
        hides_command=_names("-h --help -V --version"),
    ),
    "caffeinate": WrapperOptions(flags=_names("-d -i -m -s -u"), valued=_names("-t -w")),
    # bash's `jobs -x command [args]` runs the command with job specifications replaced.
    "jobs": WrapperOptions(flags=_names("-l -n -p -r -s"), command_flag=_names("-x")),
}
"""Wrappers whose remaining words (after their options) are the command they run."""

XARGS: Final = WrapperOptions(
    flags=_names(
        "-0 --null -r --no-run-if-empty -t --verbose -p --interactive -x --exit -o --open-tty"
    ),
    valued=_names(
        "-a --arg-file -d --delimiter -E -I -L -n --max-args -P --max-procs -s --max-chars"
        " --process-slot-var"
    ),
    glued=_names("-e --eof -i --replace -l --max-lines"),
)
"""``xargs``: the command it runs gets its arguments from standard input."""


def scan_wrapper(name: str, options: WrapperOptions, rest: list[str]) -> WrapperScan:
    """Read a wrapper's options, up to the command it runs.

    Args:
        name: The wrapper's name (for messages).
        options: What it accepts.
        rest: Its words after its name.
    """
    scan = _scan(options, rest)
    if options.command_flag and not any(o in options.command_flag for o, _ in scan.options):
        return WrapperScan(
            -1, scan.assignments, scan.unknown, scan.moved, scan.scripts, scan.options
        )
    return scan


def _scan(options: WrapperOptions, rest: list[str]) -> WrapperScan:
    env: list[str] = []
    positions: list[int] = []
    seen: list[tuple[str, str | None]] = []
    scripts: list[str] = []
    unknown = False
    moved = options.moves
    index = 0
    positional = options.positional
    ended = False
    while index < len(rest):
        word = rest[index]
        if ended or not word.startswith("-") or (word == "-" and not options.dash_is_flag):
            if options.assignments and _ASSIGNMENT.match(word) and not positional:
                env.append(word)
                positions.append(index)
                index += 1
                continue
            if positional:
                positional -= 1
                index += 1
                continue
            break
        if word == "--":
            ended = True  # still the operands (a duration, a lock file) before the command
            index += 1
            continue
        if word == "-":
            index += 1  # `env -`: an empty environment
            continue
        option, equals, glued_value = (
            word.partition("=")
            if word.startswith("--")
            else (
                word,
                "",
                "",
            )
        )
        if word.startswith("--"):
            consumed = 1
            value = glued_value if equals else (rest[index + 1] if index + 1 < len(rest) else "")
            if option in options.hides_command:
                return WrapperScan(-1, tuple(env), True, moved, tuple(scripts), tuple(seen))
            if option in options.valued or option in options.script:
                consumed = 1 if equals else 2
                seen.append((option, value))
            elif option in options.glued:
                seen.append((option, glued_value if equals else None))
            elif (
                option not in options.flags
                and option not in options.command_flag
                and not options.any_long
            ):
                unknown = True
            else:
                seen.append((option, None))
            if option in options.chdir:
                moved = True
            if option in options.script:
                scripts.append(value)
            index += consumed
            continue
        if options.numeric_flags and word[1:].isdigit():
            index += 1
            continue
        letters = word[1:]
        consumed = 1
        for position, letter in enumerate(letters):
            option = "-" + letter
            if option in options.hides_command:
                return WrapperScan(-1, tuple(env), True, moved, tuple(scripts), tuple(seen))
            if option in options.chdir:
                moved = True
            if option in options.glued:
                seen.append((option, letters[position + 1 :] or None))
                break  # its value, if any, is the rest of the cluster
            if option in options.valued or option in options.script:
                value = letters[position + 1 :]
                if not value:
                    consumed = 2  # the value is the next word
                    value = rest[index + 1] if index + 1 < len(rest) else ""
                if option in options.script:
                    scripts.append(value)
                seen.append((option, value))
                break  # otherwise the rest of the cluster is the value
            seen.append((option, None))
            if option not in options.flags and option not in options.command_flag:
                unknown = True
        index += consumed
    start = index if index < len(rest) else -1
    return WrapperScan(
        start, tuple(env), unknown, moved, tuple(scripts), tuple(seen), tuple(positions)
    )
