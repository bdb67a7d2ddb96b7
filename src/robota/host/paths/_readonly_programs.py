"""The read-only programs and the options each may be given (S21).

Every table here is an **allow-list written from the program's manual** (GNU coreutils 9,
GNU grep 3, GNU findutils 4.9, GNU diffutils 3, util-linux 2.38 ``column``, file 5, jq 1.7,
ripgrep 14, tree 2, git 2.39; the option spellings a Debian 12 system accepts): an option that is
not listed makes a command *not* read-only, so a writing or program-running option that was
overlooked costs a prompt, never a silent write. Options left out on purpose, because they write,
run a program, follow symlinks out of a tree, read file names from a file, or never return:

* ``sort -o/--output``, ``-T``, ``--compress-program``, ``--files0-from``; ``tree -o``, ``-R``,
  ``--fromfile``, ``-l`` (follows links); ``uniq``'s second operand (an output file);
* ``grep -R``/``--dereference-recursive``, ``ls -L``/``--dereference``, ``du -L``, ``find -L``,
  ``-follow``, ``diff -r`` (all follow symlinks inside a tree, so a link there leads outside);
* ``find -exec/-execdir/-ok/-okdir/-delete/-fprint*/-fls``, ``rg --pre``/``-z``/``-L``,
  ``file -z/-Z/-C/-f``, ``diff -l`` (runs ``pr``), ``jq -f/-L/--slurpfile/--rawfile``;
* ``wc``/``du``/``sort --files0-from``, ``sha*sum -c`` (read the names of other files);
* ``tail -f/-F``, ``date -s``, any operand of ``hostname`` (sets the host name);
* git: ``-c``, ``--config-env``, ``--exec-path``, ``-C``, ``--git-dir``, ``--work-tree``,
  ``--namespace``, ``-p``/``--paginate``, ``--ext-diff``, ``--textconv``, ``--output``,
  ``--open-files-in-pager``, ``--show-signature`` (runs gpg), and every subcommand not listed.

Long options are matched exactly: GNU's unambiguous abbreviations (``sort --out=f``) are not
recognised, and so are refused.

An option listed here is only as read-only as the values it accepts. Values that are small
languages — a jq filter, git's ``--format``/``--pretty`` placeholders (``%G?`` runs gpg), ref-filter
atoms (``%(signature)``), a ``date -d`` string — are judged by :mod:`._readonly_languages`, whose
docstring records every format- or expression-valued option audited and the verdict for each.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias, final

__all__ = ["FIND", "GIT_GLOBAL", "GIT_SUBCOMMANDS", "PROGRAMS", "OperandKind", "Program"]

OperandKind: TypeAlias = Literal["paths", "text", "pattern_then_paths", "filter_then_paths"]
ValueKind: TypeAlias = Literal["text", "path"]


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _values(text: str = "", paths: str = "") -> dict[str, ValueKind]:
    out: dict[str, ValueKind] = dict.fromkeys(text.split(), "text")
    out.update(dict.fromkeys(paths.split(), "path"))
    return out


@final
@dataclass(frozen=True, slots=True)
class Program:
    """What one read-only program may be given.

    Attributes:
        flags: Options without a value (``-l``, ``--all``).
        values: Options with a value, and whether the value is a path the program reads.
        optional: Long options whose value is optional and given only as ``--opt=value``.
        pairs: Options followed by two values (``jq --arg NAME VALUE``).
        operands: What the operands are: files read (``"paths"``), plain text (``"text"``), a
            pattern and then files (unless a pattern option gave the pattern), a jq filter and
            then files.
        max_operands: At most this many operands (``uniq``: a second one is written to).
        numeric: ``-N`` for a number is an option (``head -5``).
        pattern_options: Options that give the pattern, so every operand is a file.
        parses_options: The program reads options at all (``echo`` and ``printf`` print
            theirs; ``true`` and ``false`` ignore them).
    """

    flags: frozenset[str] = frozenset()
    values: Mapping[str, ValueKind] = field(default_factory=dict)
    optional: frozenset[str] = frozenset()
    pairs: frozenset[str] = frozenset()
    operands: OperandKind = "paths"
    max_operands: int | None = None
    numeric: bool = False
    pattern_options: frozenset[str] = frozenset()
    parses_options: bool = True


_PLAIN = Program(operands="text", parses_options=False)

_GREP = Program(
    flags=_set(
        "-E -F -G -P -i -y -v -w -x -c -l -L -n -h -H -o -q -s -a -I -r -z -Z -U -b -T"
        " --extended-regexp --fixed-strings --basic-regexp --perl-regexp --ignore-case"
        " --no-ignore-case --invert-match --word-regexp --line-regexp --count"
        " --files-with-matches --files-without-match --line-number --no-filename"
        " --with-filename --only-matching --quiet --silent --no-messages --text --recursive"
        " --null --null-data --byte-offset --initial-tab --line-buffered --binary"
        " --no-group-separator"
    ),
    values=_values(
        "-e --regexp -m --max-count -A -B -C --after-context --before-context --context"
        " --label --include --exclude --exclude-dir --binary-files -d --directories -D"
        " --devices --group-separator",
        paths="-f --file --exclude-from",
    ),
    optional=_set("--color --colour"),
    operands="pattern_then_paths",
    numeric=True,
    pattern_options=_set("-e --regexp -f --file"),
)

_CHECKSUM = Program(flags=_set("-b -t -z --binary --text --tag --zero"))

PROGRAMS: Final[Mapping[str, Program]] = {
    "basename": Program(
        flags=_set("-a --multiple -z --zero"), values=_values("-s --suffix"), operands="text"
    ),
    "dirname": Program(flags=_set("-z --zero"), operands="text"),
    "cat": Program(
        flags=_set(
            "-A -b -e -E -n -s -t -T -u -v --show-all --number-nonblank --number"
            " --squeeze-blank --show-ends --show-tabs --show-nonprinting"
        )
    ),
    "cmp": Program(
        flags=_set("-b -l -s --print-bytes --verbose --quiet --silent"),
        values=_values("-i --ignore-initial -n --bytes"),
    ),
    "column": Program(
        flags=_set(
            "-t -x -e -J -L -d --table --fillrows --json --keep-empty-lines"
            " --table-noheadings --table-noextreme"
        ),
        values=_values(
            "-c --output-width -s --separator -o --output-separator -N --table-columns -R"
            " --table-right -T --table-truncate -H --table-hide -W --table-wrap -O"
            " --table-order -E --table-noextreme -r --tree -i --tree-id -p --tree-parent -l"
            " --table-columns-limit"
        ),
    ),
    "cut": Program(
        flags=_set("-n -s -z --complement --only-delimited --zero-terminated"),
        values=_values("-b -c -d -f --bytes --characters --delimiter --fields --output-delimiter"),
    ),
    "date": Program(
        flags=_set("-u --utc --universal -R --rfc-email --debug"),
        values=_values("-d --date --rfc-3339", paths="-r --reference -f --file"),
        optional=_set("--iso-8601"),
        operands="text",  # only `+FORMAT`; see the classifier
    ),
    "df": Program(
        flags=_set(
            "-a --all -h --human-readable -H --si -i --inodes -k -l --local -P --portability"
            " -T --print-type --total --no-sync"
        ),
        values=_values("-B --block-size -t --type -x --exclude-type"),
        optional=_set("--output"),
    ),
    "diff": Program(
        flags=_set(
            "-q -s -y -i -E -Z -b -w -B -a -t -T -p -d -u -c -e -f -n -N --brief"
            " --report-identical-files --side-by-side --ignore-case --ignore-tab-expansion"
            " --ignore-trailing-space --ignore-space-change --ignore-all-space"
            " --ignore-blank-lines --text --strip-trailing-cr --expand-tabs --initial-tab"
            " --show-c-function --minimal --speed-large-files --suppress-common-lines"
            " --left-column --normal --new-file --unidirectional-new-file --no-dereference"
            " --suppress-blank-empty --ed --rcs --ignore-file-name-case"
            " --no-ignore-file-name-case"
        ),
        values=_values(
            "-U -C -W -F -I -x -D --label --width --show-function-line"
            " --ignore-matching-lines --exclude --ifdef --tabsize --horizon-lines"
            " --line-format --old-line-format --new-line-format --unchanged-line-format"
            " --old-group-format --new-group-format --changed-group-format"
            " --unchanged-group-format",
            paths="-X --exclude-from --from-file --to-file",
        ),
        optional=_set("--color --unified --context"),
    ),
    "du": Program(
        flags=_set(
            "-a --all --apparent-size -b --bytes -c --total -D --dereference-args -H -h"
            " --human-readable --inodes -k -l --count-links -m -P --no-dereference -s"
            " --summarize -S --separate-dirs --si -x --one-file-system -0 --null"
        ),
        values=_values(
            "-B --block-size -d --max-depth -t --threshold --exclude --time-style",
            paths="-X --exclude-from",
        ),
        optional=_set("--time"),
    ),
    "echo": _PLAIN,
    "egrep": _GREP,
    "fgrep": _GREP,
    "grep": _GREP,
    "false": _PLAIN,
    "true": _PLAIN,
    "file": Program(
        flags=_set(
            "-b -i -L -h -k -N -n -p -r -s -0 -E -S --brief --mime --mime-type"
            " --mime-encoding --dereference --no-dereference --keep-going --no-pad"
            " --no-buffer --preserve-date --raw --special-files --print0 --extension"
            " --apple --no-sandbox"
        ),
        values=_values("-e --exclude -F --separator -P --parameter", paths="-m --magic-file"),
    ),
    "head": Program(
        flags=_set("-q -v -z --quiet --silent --verbose --zero-terminated"),
        values=_values("-n -c --lines --bytes"),
        numeric=True,
    ),
    "tail": Program(
        flags=_set("-q -v -z --quiet --silent --verbose --zero-terminated"),
        values=_values("-n -c --lines --bytes"),
        numeric=True,
    ),
    "hostname": Program(
        flags=_set(
            "-a -A -d -f -i -I -s -y --alias --all-fqdns --domain --fqdn --long"
            " --ip-address --all-ip-addresses --short --yp --nis"
        ),
        operands="text",
        max_operands=0,  # an operand sets the host name
    ),
    "id": Program(
        flags=_set(
            "-a -Z --context -g --group -G --groups -n --name -r --real -u --user -z --zero"
        ),
        operands="text",
    ),
    "jq": Program(
        flags=_set(
            "-r -j -a -c -n -s -e -S -C -M -R --raw-output --join-output --ascii-output"
            " --compact-output --null-input --slurp --exit-status --sort-keys"
            " --color-output --monochrome-output --tab --seq --stream --raw-input"
            " --unbuffered --raw-output0"
        ),
        values=_values("--indent"),
        pairs=_set("--arg --argjson"),
        operands="filter_then_paths",
    ),
    "ls": Program(
        flags=_set(
            "-a -A -b -B -c -C -d -f -F -g -G -h -H -i -k -l -m -n -N -o -p -q -Q -r -R -s"
            " -S -t -u -U -v -x -X -Z -1 --all --almost-all --author --escape --directory"
            " --file-type --full-time --group-directories-first --no-group"
            " --human-readable --si --dereference-command-line"
            " --dereference-command-line-symlink-to-dir --inode --kibibytes"
            " --numeric-uid-gid --literal --hide-control-chars --show-control-chars"
            " --quote-name --recursive --size --context --reverse"
        ),
        values=_values(
            "-I --ignore -T --tabsize -w --width --block-size --format --hide"
            " --indicator-style --quoting-style --sort --time --time-style"
        ),
        optional=_set("--color --colour --classify --hyperlink"),
    ),
    "md5sum": _CHECKSUM,
    "sha1sum": _CHECKSUM,
    "sha224sum": _CHECKSUM,
    "sha256sum": _CHECKSUM,
    "sha384sum": _CHECKSUM,
    "sha512sum": _CHECKSUM,
    "b2sum": _CHECKSUM,
    "nl": Program(
        flags=_set("-p --no-renumber"),
        values=_values(
            "-b -d -f -h -i -l -n -s -v -w --body-numbering --section-delimiter"
            " --footer-numbering --header-numbering --line-increment --join-blank-lines"
            " --number-format --number-separator --starting-line-number --number-width"
        ),
    ),
    "printf": _PLAIN,
    "pwd": Program(flags=_set("-L -P"), operands="text", max_operands=0),
    "readlink": Program(
        flags=_set(
            "-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing"
            " --canonicalize-missing --no-newline --quiet --silent --verbose --zero"
        )
    ),
    "realpath": Program(
        flags=_set(
            "-e -m -L -P -q -s -z --canonicalize-existing --canonicalize-missing --logical"
            " --physical --quiet --strip --no-symlinks --zero"
        ),
        values=_values(paths="--relative-to --relative-base"),
    ),
    "rg": Program(
        flags=_set(
            "-i -S -s -w -x -v -n -N -l -c -o -F -U -P -H -I -p -q -u -a -b -0"
            " --hidden --no-ignore --no-ignore-vcs --no-ignore-parent --no-ignore-dot"
            " --no-ignore-global --no-ignore-exclude --ignore-case --smart-case"
            " --case-sensitive --word-regexp --line-regexp --invert-match --line-number"
            " --no-line-number --files-with-matches --files-without-match --count"
            " --count-matches --only-matching --fixed-strings --multiline --multiline-dotall"
            " --pcre2 --with-filename --no-filename --heading --no-heading --pretty --quiet"
            " --files --json --vimgrep --column --no-column --byte-offset --trim --stats"
            " --text --null --null-data --type-list --no-messages --one-file-system --crlf"
            " --no-config --binary --passthru --unrestricted --no-unicode --sort-files"
            " --max-columns-preview --no-require-git --block-buffered --line-buffered"
        ),
        values=_values(
            "-e --regexp -g --glob --iglob -t --type -T --type-not -m --max-count -A -B -C"
            " --after-context --before-context --context -M --max-columns -d --max-depth -j"
            " --threads --max-filesize --sort --sortr --color --colors --encoding -E -r"
            " --replace --path-separator --context-separator --field-match-separator"
            " --engine --regex-size-limit --dfa-size-limit",
            paths="-f --file --ignore-file",
        ),
        operands="pattern_then_paths",
        pattern_options=_set("-e --regexp -f --file --files --type-list"),
    ),
    "sort": Program(
        flags=_set(
            "-b -d -f -g -h -i -M -n -R -r -V -c -C -m -s -u -z --ignore-leading-blanks"
            " --dictionary-order --ignore-case --general-numeric-sort --ignore-nonprinting"
            " --month-sort --human-numeric-sort --numeric-sort --random-sort --reverse"
            " --version-sort --merge --stable --unique --zero-terminated --debug"
        ),
        values=_values(
            "-k --key -t --field-separator -S --buffer-size --parallel --batch-size --sort",
            paths="--random-source",
        ),
        optional=_set("--check"),
    ),
    "stat": Program(
        flags=_set("-L -f -t --dereference --file-system --terse"),
        values=_values("-c --format --printf --cached"),
    ),
    "test": _PLAIN,  # its operands are judged by the classifier's own reading of `test`
    "[": _PLAIN,
    "tr": Program(
        flags=_set("-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1"),
        operands="text",
    ),
    "tree": Program(
        flags=_set(
            "-a -d -f -i -q -N -Q -p -u -g -s -h -D -F -v -t -c -U -r -C -n -A -S -J -X"
            " --si --du --noreport --dirsfirst --filesfirst --prune --gitignore --inodes"
            " --device --matchdirs --ignore-case"
        ),
        values=_values("-L -P -I --charset --filelimit --timefmt --sort -H -T"),
    ),
    "uname": Program(
        flags=_set(
            "-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release"
            " --kernel-version --machine --processor --hardware-platform --operating-system"
        ),
        operands="text",
        max_operands=0,
    ),
    "uniq": Program(
        flags=_set("-c -d -D -i -u -z --count --repeated --ignore-case --unique --zero-terminated"),
        values=_values("-f -s -w --skip-fields --skip-chars --check-chars"),
        optional=_set("--all-repeated --group"),
        max_operands=1,  # a second operand is the output file
    ),
    "wc": Program(
        flags=_set("-c -m -l -L -w --bytes --chars --lines --max-line-length --words"),
        values=_values("--total"),
    ),
    "which": Program(flags=_set("-a -s"), operands="text"),
    "whoami": Program(operands="text", max_operands=0),
}
"""Programs that only read (and write to standard output), given the options listed."""

GIT_GLOBAL: Final = _set(
    "--no-pager -P --no-optional-locks --literal-pathspecs --no-replace-objects"
)
"""The git options that may come before the subcommand (``-c``, ``-C`` … may not)."""

_DIFF_FLAGS = (
    "-p -u --patch -s --no-patch --raw --patch-with-raw --patch-with-stat --shortstat"
    " --numstat --name-only --name-status --summary --minimal --patience --histogram -z"
    " --full-index --binary --no-renames --no-ext-diff --no-textconv --ita-invisible-in-index"
    " -R --no-prefix --no-relative --exit-code --quiet -w -b --ignore-all-space"
    " --ignore-space-change --ignore-blank-lines --ignore-space-at-eol --ignore-cr-at-eol"
    " --text -a --irreversible-delete -D --no-color --no-indent-heuristic --indent-heuristic"
    " --function-context -W --check --pickaxe-all --pickaxe-regex -t --cumulative"
)
_DIFF_VALUES = (
    "--diff-algorithm --word-diff-regex --diff-filter --src-prefix --dst-prefix --line-prefix"
    " --anchored --inter-hunk-context --output-indicator-new --output-indicator-old"
    " --output-indicator-context --color-moved-ws -S -G --find-object --ignore-matching-lines -I"
)
_DIFF_OPTIONAL = (
    "--stat --dirstat --color --word-diff --color-words --unified -U --find-renames -M"
    " --find-copies -C --break-rewrites -B --abbrev --relative --submodule --ignore-submodules"
    " --color-moved -l"
)
_LOG_FLAGS = (
    " --oneline --graph --all --no-decorate --abbrev-commit --no-abbrev-commit --relative-date"
    " --reverse --first-parent --merges --no-merges --no-walk --do-walk --topo-order"
    " --date-order --author-date-order -i --regexp-ignore-case --all-match --invert-grep -E"
    " --extended-regexp -F --fixed-strings --perl-regexp --basic-regexp --follow --cc -c -m"
    " --left-right --cherry-pick --cherry-mark --cherry --boundary --ancestry-path"
    " --simplify-by-decoration --full-history --dense --sparse --simplify-merges --no-notes"
    " --mailmap --no-mailmap --use-mailmap --log-size --source --parents --children"
    " --no-expand-tabs --remove-empty --show-pulls --left-only --right-only --walk-reflogs -g"
    " --bisect --stdin --combined-all-paths --show-linear-break --reflog --single-worktree"
    " --ignore-missing --not"
)
_LOG_VALUES = (
    " -n --max-count --skip --since --after --until --before --author --committer --grep"
    " --grep-reflog --format --date --encoding --min-parents --max-parents --exclude"
    " --since-as-filter"
)
_LOG_OPTIONAL = " --decorate --pretty --expand-tabs --branches --tags --remotes --glob"


_DIFF_PATHS = "-O --orderfile"  # an order file: a file git reads


def _git(
    flags: str = "",
    values: str = "",
    optional: str = "",
    *,
    paths: str = "",
    numeric: bool = False,
    operands: OperandKind = "paths",
    max_operands: int | None = None,
    pattern_options: str = "",
) -> Program:
    return Program(
        flags=_set(flags),
        values=_values(values, paths=paths),
        optional=_set(optional),
        numeric=numeric,
        operands=operands,
        max_operands=max_operands,
        pattern_options=_set(pattern_options),
    )


_LOG = _git(
    _DIFF_FLAGS + _LOG_FLAGS,
    _DIFF_VALUES + _LOG_VALUES,
    _DIFF_OPTIONAL + _LOG_OPTIONAL,
    paths=_DIFF_PATHS,
    numeric=True,
)

GIT_SUBCOMMANDS: Final[Mapping[str, Program]] = {
    "status": _git(
        "-s --short -b --branch --long -v --verbose -z --no-renames --renames --no-column"
        " --ahead-behind --no-ahead-behind --show-stash --null",
        optional="--porcelain --untracked-files -u --ignored --ignore-submodules"
        " --find-renames --column",
    ),
    "log": _LOG,
    "show": _LOG,
    "shortlog": _git(
        _LOG_FLAGS + " -n --numbered -s --summary -e --email -c --committer",
        _LOG_VALUES.replace(" -n", "") + " --group",
        _LOG_OPTIONAL + " -w",
    ),
    "rev-list": _git(
        _LOG_FLAGS + " --count --objects --objects-edge --timestamp --header --quiet",
        _LOG_VALUES,
        _LOG_OPTIONAL + " --abbrev",
        numeric=True,
    ),
    "diff": _git(
        _DIFF_FLAGS + " --cached --staged --merge-base --no-index",
        _DIFF_VALUES,
        _DIFF_OPTIONAL,
        paths=_DIFF_PATHS,
    ),
    "rev-parse": _git(
        "--show-toplevel --abbrev-ref --verify -q --quiet --git-dir --absolute-git-dir"
        " --is-inside-work-tree --is-inside-git-dir --is-bare-repository --show-prefix"
        " --show-cdup --symbolic --symbolic-full-name --all --git-common-dir"
        " --show-superproject-working-tree --local-env-vars --revs-only --no-revs --flags"
        " --no-flags --sq --not --show-object-format --show-ref-format",
        "--default --path-format --since --after --until --before",
        "--short --branches --tags --remotes --glob",
    ),
    "ls-files": _git(
        "-c -d -m -o -i -s -u -k -z -t -v -f --cached --deleted --modified --others --ignored"
        " --stage --unmerged --killed --directory --no-empty-directory --exclude-standard"
        " --error-unmatch --full-name --recurse-submodules --eol --deduplicate --sparse",
        "-x --exclude --exclude-per-directory --format --with-tree",
        "--abbrev",
        paths="-X --exclude-from",
    ),
    "ls-tree": _git(
        "-d -r -t -l -z --name-only --name-status --object-only --full-name --full-tree --long",
        "--format",
        "--abbrev",
    ),
    "blame": _git(
        "-b --root --show-stats -f --show-name -n --show-number -s -e --show-email -w -l -t -p"
        " --porcelain --line-porcelain --incremental -c --color-lines --color-by-age --reverse"
        " --first-parent --progress --no-progress --score-debug",
        "-L --since --date --encoding --ignore-rev",
        "--abbrev -M -C",
        paths="--ignore-revs-file --contents",
    ),
    "describe": _git(
        "--all --tags --contains --exact-match --debug --long --always --first-parent",
        "--candidates --match --exclude",
        "--abbrev --dirty --broken",
    ),
    "cat-file": _git(
        "-t -s -e -p --batch-all-objects --buffer --unordered --follow-symlinks"
        " --allow-unknown-type --use-mailmap --no-use-mailmap -Z",
        optional="--batch --batch-check --batch-command",
    ),
    "branch": _git(
        "-a --all -r --remotes -v -vv --verbose -l --list --show-current --no-column"
        " --no-abbrev -i --ignore-case --omit-empty --no-color",
        "--points-at --sort --format",
        "--contains --no-contains --merged --no-merged --color --column --abbrev",
        operands="text",
    ),
    "tag": _git(
        "-l --list -i --ignore-case --no-column --omit-empty --no-color",
        "--points-at --sort --format",
        "--contains --no-contains --merged --no-merged --color --column -n",
        operands="text",
    ),
    "remote": _git("-v --verbose", operands="text", max_operands=0),
    "grep": _git(
        "-i --ignore-case -I -v --invert-match -w --word-regexp -a --text -n --line-number"
        " --column -l --files-with-matches --name-only -L --files-without-match -c --count"
        " -h -H --full-name -E --extended-regexp -G --basic-regexp -F --fixed-strings -P"
        " --perl-regexp -o --only-matching -q --quiet --and --or --not --all-match --break"
        " --heading -p --show-function -W --function-context -z --null --cached --untracked"
        " --no-index --exclude-standard --no-exclude-standard --recurse-submodules -r"
        " --recursive --no-recursive --no-color",
        "-e -A -B -C --after-context --before-context --context --max-depth --threads -m"
        " --max-count",
        "--color",
        paths="-f",
        numeric=True,
        operands="pattern_then_paths",
        pattern_options="-e -f",
    ),
    "show-ref": _git(
        "--heads --branches --tags -d --dereference -s --verify -q --quiet --exists",
        optional="--hash --abbrev",
        operands="text",
    ),
    "for-each-ref": _git(
        "--shell --perl --python --tcl --ignore-case --omit-empty --stdin",
        "--format --sort --count --points-at --exclude",
        "--merged --no-merged --contains --no-contains --color",
        operands="text",
    ),
    "merge-base": _git(
        "-a --all --octopus --independent --is-ancestor --fork-point", operands="text"
    ),
    "name-rev": _git(
        "--tags --all --name-only --no-undefined --always --annotate-stdin",
        "--refs --exclude",
        operands="text",
    ),
    "count-objects": _git("-v --verbose -H --human-readable", max_operands=0),
    "version": _git("--build-options", max_operands=0),
}
"""git subcommands that only read the repository, with their options."""

FIND: Final = {
    "global": _set("-H -P"),
    "global_values": _set("-D -O"),
    "flags": _set(
        "-depth -d -empty -executable -false -true -readable -writable -nouser -nogroup -prune"
        " -print -print0 -ls -quit -xdev -mount -daystart -noleaf -ignore_readdir_race"
        " -noignore_readdir_race -not -a -and -o -or ! ( ) ,"
    ),
    "text": _set(
        "-name -iname -path -ipath -wholename -iwholename -regex -iregex -regextype -type"
        " -xtype -size -mtime -mmin -atime -amin -ctime -cmin -perm -user -group -uid -gid"
        " -links -inum -maxdepth -mindepth -lname -ilname -fstype -printf -used -context"
    ),
    "path": _set("-newer -anewer -cnewer -samefile"),
}
"""``find``: the global options, expression tokens without an argument, and tests taking a
text or a path argument (``-newerXY`` is read by the classifier)."""
