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

__all__ = ["WRAPPERS", "XARGS", "WrapperOptions", "scan_wrapper"]

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
    """

    flags: frozenset[str] = frozenset()
    valued: frozenset[str] = frozenset()
    hides_command: frozenset[str] = frozenset()
    numeric_flags: bool = False
    positional: int = 0


WRAPPERS: Final = {
    "env": WrapperOptions(
        flags=_names("-i --ignore-environment -0 --null -v --debug"),
        valued=_names("-u --unset -C --chdir"),
        hides_command=_names("-S --split-string"),
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
    "coproc": WrapperOptions(),
}
"""Wrappers whose remaining words (after their options) are the command they run."""

XARGS: Final = WrapperOptions(
    flags=_names(
        "-0 --null -r --no-run-if-empty -t --verbose -p --interactive -x --exit -o --open-tty"
    ),
    valued=_names(
        "-a --arg-file -d --delimiter -E --eof -I --replace -L --max-lines -n --max-args -P"
        " --max-procs -s --max-chars --process-slot-var -e -i -l"
    ),
)
"""``xargs``: the command it runs gets its arguments from standard input."""


def scan_wrapper(
    name: str, options: WrapperOptions, rest: list[str]
) -> tuple[int, list[str], bool]:
    """Read a wrapper's options.

    Args:
        name: The wrapper's name (``env`` also takes ``NAME=value`` words).
        options: What it accepts.
        rest: Its words after its name.

    Returns:
        Where the wrapped command starts in ``rest`` (``-1`` when none follows), the
        assignments ``env`` hands on, and whether an option was not recognised (or hides the
        command).
    """
    env: list[str] = []
    unknown = False
    index = 0
    positional = options.positional
    while index < len(rest):
        word = rest[index]
        if name == "env" and _ASSIGNMENT.match(word):
            env.append(word)
            index += 1
            continue
        if word == "--":
            index += 1
            break
        if word.startswith("--"):
            option = word.split("=", 1)[0]
            if option in options.hides_command:
                return -1, env, True
            if option in options.valued:
                index += 1 if "=" in word else 2
                continue
            if option not in options.flags:
                unknown = True
            index += 1
            continue
        if word.startswith("-") and word != "-":
            if options.numeric_flags and word[1:].isdigit():
                index += 1
                continue
            letters = word[1:]
            consumed = 1
            for position, letter in enumerate(letters):
                option = "-" + letter
                if option in options.hides_command:
                    return -1, env, True
                if option in options.valued:
                    if position == len(letters) - 1:
                        consumed = 2  # the value is the next word
                    break  # otherwise the rest of the cluster is the value
                if option not in options.flags:
                    unknown = True
            index += consumed
            continue
        if positional:
            positional -= 1
            index += 1
            continue
        break
    if index >= len(rest):
        return -1, env, unknown
    return index, env, unknown
