"""Option grammars of the programs deny and ask rules are written about (S12).

Each table was written from the program's manual — GNU coreutils 9 (``rm``, ``cp``, ``mv``,
``ln``, ``chmod``, ``chown``, ``chgrp``, ``shred``, ``truncate``), GNU sed 4.9, curl 8, git 2.39
to 2.47 (``git help <command>``), kubectl 1.30 and Docker 27 (cobra/pflag: no abbreviations,
global flags anywhere for kubectl, before the subcommand for docker), Terraform 1.9 (Go's
``flag`` package: one or two dashes, no clusters, no abbreviations) — and is read by
:func:`~robota.core.permissions._options.parse_args`. A table need not be complete to be safe:
an option it does not list is *unknown*, and an unknown option next to a missing wanted option
makes a deny or ask rule unevaluable (it asks), never "no match". What a complete table adds is
precision: ``rm -Rf`` *is* ``rm -rf``, ``git reset --ha`` *is* ``git reset --hard``.

:data:`DATA_PROGRAMS` are the programs known never to run their arguments as commands (apart
from the options :mod:`._shell_wrappers` lists as running one, which the analysis reads as the
commands they are). Every other program may: a deny or ask rule looks through its arguments
(S21: "runs unless known not to").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from robota.core.permissions._options import Grammar, grammar, parse_args
from robota.core.permissions._shell_model import SimpleCommand

__all__ = [
    "DATA_PROGRAMS",
    "GIT_COMMANDS",
    "GIT_DATA_COMMANDS",
    "GRAMMARS",
    "program_grammar",
    "runs_arguments",
]


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --------------------------------------------------------------------------- coreutils & co.

_RM = grammar(
    "-f|--force -i -I --interactive=? --one-file-system --no-preserve-root --preserve-root=?"
    " -r|-R|--recursive -d|--dir -v|--verbose --help --version"
)
_CP = grammar(
    "-a|--archive --attributes-only --backup=? -b --copy-contents -d -f|--force"
    " -i|--interactive -H -l|--link -L|--dereference -n|--no-clobber -P|--no-dereference -p"
    " --preserve=? --no-preserve= --parents -R|-r|--recursive --reflink=? --remove-destination"
    " --sparse= --strip-trailing-slashes -s|--symbolic-link -S|--suffix= -t|--target-directory="
    " -T|--no-target-directory -u|--update=? -v|--verbose -x|--one-file-system -Z --context=?"
    " --debug --keep-directory-symlink --help --version"
)
_MV = grammar(
    "--backup=? -b --debug -f|--force -i|--interactive -n|--no-clobber --no-copy"
    " --strip-trailing-slashes -S|--suffix= -t|--target-directory= -T|--no-target-directory"
    " --exchange -u|--update=? -v|--verbose -Z|--context --help --version"
)
_LN = grammar(
    "--backup=? -b -d|-F|--directory -f|--force -i|--interactive -L|--logical"
    " -n|--no-dereference -P|--physical -r|--relative -s|--symbolic -S|--suffix="
    " -t|--target-directory= -T|--no-target-directory -v|--verbose --help --version"
)
_OWNERSHIP = (
    "-c|--changes -f|--silent|--quiet -v|--verbose --dereference -h|--no-dereference"
    " --no-preserve-root --preserve-root --reference= -R|--recursive -H -L -P --help --version"
)
_CHOWN = grammar(_OWNERSHIP + " --from=")
_CHGRP = grammar(_OWNERSHIP)
_CHMOD = grammar(_OWNERSHIP)
_SHRED = grammar(
    "-f|--force -n|--iterations= --random-source= -s|--size= -u|--remove=? -v|--verbose"
    " -x|--exact -z|--zero --help --version"
)
_TRUNCATE = grammar("-c|--no-create -o|--io-blocks -r|--reference= -s|--size= --help --version")
_SED = grammar(
    "-n|--quiet|--silent --debug -e|--expression= -f|--file= --follow-symlinks -i|--in-place=?"
    " -l|--line-length= --posix -E|-r|--regexp-extended -s|--separate -z|--null-data"
    " -u|--unbuffered --sandbox --help --version"
)
_CURL = grammar(
    "-X|--request= -d|--data= --data-binary= --data-raw= --data-ascii= --data-urlencode="
    " --json= -F|--form= --form-string= -H|--header= -o|--output= -O|--remote-name"
    " -T|--upload-file= -u|--user= -k|--insecure -L|--location -s|--silent -S|--show-error"
    " -f|--fail --fail-with-body -v|--verbose -I|--head -G|--get -x|--proxy= -A|--user-agent="
    " -e|--referer= -b|--cookie= -c|--cookie-jar= -K|--config= -m|--max-time="
    " --connect-timeout= --retry= -w|--write-out= -i|--include -#|--progress-bar -n|--netrc"
    " -r|--range= -C|--continue-at= -z|--time-cond= -E|--cert= --url= -Z|--parallel"
    " --compressed -4|--ipv4 -6|--ipv6 --resolve= --http1.1 --http2 -q|--disable -0|--http1.0"
    " -l|--list-only -Q|--quote= -R|--remote-time -U|--proxy-user= -V|--version -a|--append"
    " -D|--dump-header= -N|--no-buffer -p|--proxytunnel -P|--ftp-port= -J|--remote-header-name"
    " -h|--help -M|--manual -j|--junk-session-cookies -B|--use-ascii -t|--telnet-option="
    " -y|--speed-time= -Y|--speed-limit= --create-dirs --oauth2-bearer= --cacert= --key=",
    option_files="--config",  # `-K file`, `-K -`: further options, a request method among them
)

# --------------------------------------------------------------------------- git

GIT_COMMANDS: Final = _names(
    """
    add am annotate apply archimport archive backfill bisect blame branch bugreport bundle
    cat-file check-attr check-ignore check-mailmap check-ref-format checkout checkout-index
    cherry cherry-pick citool clean clone column commit commit-graph commit-tree config
    count-objects credential credential-cache credential-store cvsexportcommit cvsimport
    cvsserver daemon describe diagnose diff diff-files diff-index diff-pairs diff-tree difftool
    fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg for-each-ref
    for-each-repo format-patch fsck fsck-objects fsmonitor--daemon gc get-tar-commit-id gitk
    gitweb grep gui hash-object help hook http-backend http-fetch http-push imap-send
    index-pack init init-db instaweb interpret-trailers last-modified log ls-files ls-remote
    ls-tree mailinfo mailsplit maintenance merge merge-base merge-file merge-index
    merge-octopus merge-one-file merge-ours merge-recursive merge-resolve merge-subtree
    merge-tree mergetool mktag mktree multi-pack-index mv name-rev notes p4 pack-objects
    pack-redundant pack-refs patch-id prune prune-packed pull push quiltimport range-diff
    read-tree rebase receive-pack reflog refs remote remote-ext remote-fd repack replace replay
    repo request-pull rerere reset restore rev-list rev-parse revert rm scalar send-email
    send-pack sh-i18n shell shortlog show show-branch show-index show-ref sparse-checkout stage
    stash status stripspace submodule svn switch symbolic-ref tag unpack-file unpack-objects
    update-index update-ref update-server-info upload-archive upload-pack var verify-commit
    verify-pack verify-tag version whatchanged worktree write-tree
    """
)
"""Every command git itself provides (``git help -a``). Any other name after ``git`` is an alias
or an external ``git-<name>`` program: what it runs is not in the line."""

GIT_DATA_COMMANDS: Final = _names(
    """
    add am annotate apply archive backfill bisect blame branch bugreport bundle cat-file
    check-attr check-ignore check-mailmap check-ref-format checkout checkout-index cherry
    cherry-pick clean clone column commit commit-graph commit-tree config count-objects
    credential-cache credential-store daemon describe diagnose diff diff-files diff-index
    diff-pairs diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch
    fmt-merge-msg for-each-ref for-each-repo format-patch fsck fsck-objects gc
    get-tar-commit-id grep hash-object help index-pack init init-db instaweb interpret-trailers
    last-modified log ls-files ls-remote ls-tree mailinfo mailsplit maintenance merge merge-base
    merge-file merge-tree mergetool mktag mktree multi-pack-index mv name-rev notes
    pack-objects pack-redundant pack-refs patch-id prune prune-packed pull push range-diff
    read-tree rebase reflog refs remote repack replace replay request-pull rerere reset restore
    rev-list rev-parse revert rm send-email send-pack shortlog show show-branch show-index
    show-ref sparse-checkout stage stash status stripspace submodule switch symbolic-ref tag
    unpack-file unpack-objects update-index update-ref update-server-info var verify-commit
    verify-pack verify-tag version whatchanged worktree write-tree
    """
)
"""git's commands audited as running nothing named by their arguments, beyond the options and
configuration the analysis reads as the commands they are (``_executing``: ``rebase --exec``,
``bisect run``, ``submodule foreach``, ``for-each-repo``, ``grep -O``, ``config <key> <value>``
…). Every other git command — ``remote-ext`` (its URL is a command line), ``merge-index`` (runs
its program), ``shell``, ``hook``, ``credential`` (runs helpers), the foreign-SCM bridges
(``svn``, ``p4``, ``cvsimport`` …) and any external ``git-<name>`` or alias — may run what its
arguments name: :func:`runs_arguments` says so."""

_QUIET = " -q|--quiet -v|--verbose --progress --no-progress"
_SIGN = " -S|--gpg-sign=? --no-gpg-sign --signoff --no-signoff"
_PATHSPEC_FILE = " --pathspec-from-file= --pathspec-file-nul"
_SUBMODULES = " --recurse-submodules=? --no-recurse-submodules"

_GIT_SUBCOMMANDS: Final[Mapping[str, Grammar]] = {
    "push": grammar(
        # --mirror force-updates and deletes remote refs; --prune deletes them.
        "--repo= --all --branches --mirror>--mirror,--force,--delete --prune>--prune,--delete"
        " -d|--delete --tags -n|--dry-run --porcelain"
        " -f|--force --force-with-lease=? --no-force-with-lease --force-if-includes"
        " --no-force-if-includes --recurse-submodules= --thin --no-thin"
        " --receive-pack|--exec= -u|--set-upstream --no-verify --verify"
        " -o|--push-option= --signed=? --no-signed -4|--ipv4 -6|--ipv6 --atomic --no-atomic"
        " --follow-tags --no-follow-tags" + _QUIET,
        implied=(("+*", "--force"), (":*", "--delete")),
    ),
    "reset": grammar(
        "--mixed --soft --hard --merge --keep -N|--intent-to-add -p|--patch --refresh"
        " --no-refresh" + _SUBMODULES + _PATHSPEC_FILE + _QUIET
    ),
    "clean": grammar("-d -f|--force -i|--interactive -n|--dry-run -e|--exclude= -x -X" + _QUIET),
    "checkout": grammar(
        "-f|--force --ours --theirs -b= -B= -t|--track=? --no-track --guess --no-guess -l"
        " --detach --orphan= --ignore-skip-worktree-bits -m|--merge --conflict= -p|--patch"
        " --ignore-other-worktrees --overwrite-ignore --no-overwrite-ignore --overlay"
        " --no-overlay" + _SUBMODULES + _PATHSPEC_FILE + _QUIET
    ),
    "switch": grammar(
        "-c|--create= -C|--force-create= -d|--detach --guess --no-guess"
        " -f|--force|--discard-changes -m|--merge --conflict= -t|--track=? --no-track --orphan="
        " --ignore-other-worktrees" + _SUBMODULES + _QUIET
    ),
    "restore": grammar(
        "-s|--source= -p|--patch -W|--worktree -S|--staged --ours --theirs -m|--merge --conflict="
        " --ignore-unmerged --ignore-skip-worktree-bits --overlay --no-overlay"
        + _SUBMODULES
        + _PATHSPEC_FILE
        + _QUIET
    ),
    "branch": grammar(
        "-d|--delete -D>--delete,--force -f|--force -m|--move -M>--move,--force -c|--copy"
        " -C>--copy,--force -l|--list -r|--remotes -a|--all -vv --abbrev=? --no-abbrev --column=?"
        " --no-column --sort= --merged=? --no-merged=? --contains=? --no-contains=? --points-at="
        " --format= --color=? --no-color -i|--ignore-case --omit-empty --create-reflog"
        " -t|--track=? --no-track -u|--set-upstream-to= --unset-upstream --edit-description"
        " --show-current --recurse-submodules" + _QUIET
    ),
    "tag": grammar(
        "-a|--annotate -s|--sign -u|--local-user= -f|--force -d|--delete -v|--verify -n=?"
        " -l|--list --sort= --color=? --no-color -i|--ignore-case --omit-empty --column=?"
        " --no-column --contains=? --no-contains=? --merged=? --no-merged=? --points-at="
        " -m|--message= -F|--file= --trailer= -e|--edit --cleanup= --create-reflog --format="
    ),
    "commit": grammar(
        "-a|--all -p|--patch -C|--reuse-message= -c|--reedit-message= --fixup= --squash="
        " --reset-author --short --branch --porcelain --long -z|--null -F|--file= --author="
        " --date= -m|--message= -t|--template= --trailer= -n|--no-verify --verify -e|--edit"
        " --no-edit --allow-empty --allow-empty-message --cleanup= --amend --no-post-rewrite"
        " -i|--include -o|--only -u|--untracked-files=? --dry-run --status --no-status"
        + _SIGN
        + _PATHSPEC_FILE
        + _QUIET
    ),
    "rebase": grammar(
        "--onto= --keep-base -i|--interactive -x|--exec= --root --autosquash --no-autosquash"
        " --autostash --no-autostash --continue --skip --abort --quit --edit-todo"
        " --show-current-patch -m|--merge --apply -s|--strategy= -X|--strategy-option= --stat"
        " -n|--no-stat --no-verify --verify -C= -f|--force-rebase|--no-ff --fork-point"
        " --no-fork-point --ignore-whitespace --whitespace= --committer-date-is-author-date"
        " --ignore-date|--reset-author-date -r|--rebase-merges=? --no-rebase-merges"
        " --update-refs --no-update-refs --empty= --reapply-cherry-picks"
        " --no-reapply-cherry-picks --allow-empty-message --rerere-autoupdate"
        " --no-rerere-autoupdate --keep-empty --no-keep-empty --context=" + _SIGN + _QUIET
    ),
    "merge": grammar(
        "--commit --no-commit --edit -e --no-edit --cleanup= --ff --no-ff --ff-only --log=?"
        " --no-log --stat -n|--no-stat --squash --no-squash --verify --no-verify"
        " -s|--strategy= -X|--strategy-option= --verify-signatures --no-verify-signatures"
        " --summary --no-summary --autostash --no-autostash --allow-unrelated-histories"
        " -m= -F|--file= --into-name= --rerere-autoupdate --no-rerere-autoupdate --overwrite-ignore"
        " --no-overwrite-ignore --abort --quit --continue" + _SIGN + _QUIET
    ),
    "pull": grammar(
        "--commit --no-commit --edit -e --no-edit --cleanup= --ff --no-ff --ff-only --log=?"
        " --no-log --stat -n|--no-stat --squash --no-squash --verify --no-verify"
        " -s|--strategy= -X|--strategy-option= -r|--rebase=? --no-rebase --autostash"
        " --no-autostash --all -a|--append --atomic --depth= --deepen= --shallow-since="
        " --shallow-exclude= --unshallow --update-shallow -f|--force -k|--keep --no-tags"
        " -p|--prune -j|--jobs= --upload-pack= -t|--tags -4|--ipv4 -6|--ipv6"
        " --allow-unrelated-histories --set-upstream -o|--server-option=" + _SIGN + _QUIET
    ),
    "fetch": grammar(
        "--all -a|--append --atomic --depth= --deepen= --shallow-since= --shallow-exclude="
        " --unshallow --update-shallow --dry-run -f|--force -k|--keep --multiple"
        " --auto-maintenance --no-auto-maintenance --auto-gc --no-auto-gc -p|--prune"
        " -P|--prune-tags -n|--no-tags --refetch --refmap= -t|--tags -j|--jobs= --set-upstream"
        " --upload-pack= -o|--server-option= --filter= --no-write-fetch-head --write-fetch-head"
        " --negotiation-tip= --negotiate-only --porcelain -4|--ipv4 -6|--ipv6 --stdin"
        " -u|--update-head-ok" + _SUBMODULES + _QUIET
    ),
    "rm": grammar(
        "-f|--force -n|--dry-run -r --cached --ignore-unmatch --sparse" + _PATHSPEC_FILE + _QUIET
    ),
    "mv": grammar("-f|--force -k -n|--dry-run --sparse -v|--verbose"),
    "add": grammar(
        "-n|--dry-run -f|--force -i|--interactive -p|--patch -e|--edit -u|--update"
        " -A|--all|--no-ignore-removal --no-all|--ignore-removal -N|--intent-to-add --refresh"
        " --ignore-errors --ignore-missing --no-warn-embedded-repo --renormalize --chmod="
        " --sparse" + _PATHSPEC_FILE + " -v|--verbose"
    ),
    "clone": grammar(
        "-l|--local --no-local --no-hardlinks -s|--shared --reference= --reference-if-able="
        " --dissociate -n|--no-checkout --bare --mirror -o|--origin= -b|--branch="
        " -u|--upload-pack= --template= -c|--config= --depth= --shallow-since="
        " --shallow-exclude= --single-branch --no-single-branch --no-tags --tags"
        " --shallow-submodules --no-shallow-submodules --remote-submodules"
        " --no-remote-submodules --separate-git-dir= -j|--jobs= --filter= --also-filter-submodules"
        " --sparse --bundle-uri= --revision= --ref-format= -4|--ipv4 -6|--ipv6 --reject-shallow"
        " --no-reject-shallow --server-option=" + _SUBMODULES + _QUIET
    ),
    "gc": grammar(
        "--aggressive --auto --prune=? --no-prune --force --keep-largest-pack -q|--quiet"
    ),
    "stash": grammar(
        "-p|--patch -S|--staged -k|--keep-index --no-keep-index -u|--include-untracked"
        " --no-include-untracked -a|--all -m|--message=" + _PATHSPEC_FILE + _QUIET,
        subcommands={
            "drop": grammar("-q|--quiet"),
            "clear": grammar(""),
            "pop": grammar("--index -q|--quiet"),
            "apply": grammar("--index -q|--quiet"),
        },
        known_subcommands="push save list show branch create store",
    ),
    "worktree": grammar(
        "",
        subcommands={
            "remove": grammar("-f|--force"),
            "prune": grammar("-n|--dry-run -v|--verbose --expire="),
            "add": grammar(
                "-f|--force --detach --checkout --no-checkout --lock --reason= --orphan -b= -B="
                " --track --no-track --guess-remote --no-guess-remote --relative-paths"
                " --no-relative-paths -q|--quiet"
            ),
        },
        known_subcommands="list lock unlock move repair",
    ),
    "update-ref": grammar("-d -m= --no-deref --create-reflog --stdin -z"),
    "reflog": grammar(
        "",
        subcommands={
            "expire": grammar(
                "--expire= --expire-unreachable= --rewrite --updateref --stale-fix --all"
                " --single-worktree -n|--dry-run --verbose"
            ),
            "delete": grammar("--rewrite --updateref -n|--dry-run --verbose"),
        },
        known_subcommands="show list exists drop",
    ),
}

_GIT: Final = grammar(
    "-v|--version -h|--help -C= -c= --exec-path=? --html-path --man-path --info-path"
    " -p|--paginate -P|--no-pager --no-replace-objects --no-lazy-fetch --no-optional-locks"
    " --no-advice --bare --git-dir= --work-tree= --namespace= --config-env= --list-cmds="
    " --attr-source= --literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs",
    abbreviations=False,  # git.c compares its own options exactly
    permute=False,
    subcommands=_GIT_SUBCOMMANDS,
    known_subcommands=" ".join(GIT_COMMANDS),
)

# --------------------------------------------------------------------------- cobra / Go CLIs

_KUBECTL_GLOBALS = (
    "-n|--namespace= --context= --kubeconfig= -s|--server= --cluster= --user= --token="
    " -v|--v= --as= --as-group= --as-uid= --request-timeout= --insecure-skip-tls-verify"
    " --certificate-authority= --client-certificate= --client-key= --cache-dir="
    " --match-server-version --password= --username= --profile= --profile-output="
    " --tls-server-name= --warnings-as-errors --disable-compression --log-flush-frequency="
    " -h|--help"
)
# `kubectl api-resources` (1.30): each built-in kind's singular, plural and short names.
_KUBECTL_KINDS = """
    binding bindings
    componentstatus componentstatuses cs
    configmap configmaps cm
    endpoints ep
    event events ev
    limitrange limitranges limits
    namespace namespaces ns
    node nodes no
    persistentvolumeclaim persistentvolumeclaims pvc
    persistentvolume persistentvolumes pv
    pod pods po
    podtemplate podtemplates
    replicationcontroller replicationcontrollers rc
    resourcequota resourcequotas quota
    secret secrets
    serviceaccount serviceaccounts sa
    service services svc
    mutatingwebhookconfiguration mutatingwebhookconfigurations
    validatingwebhookconfiguration validatingwebhookconfigurations
    validatingadmissionpolicy validatingadmissionpolicies
    validatingadmissionpolicybinding validatingadmissionpolicybindings
    customresourcedefinition customresourcedefinitions crd crds
    apiservice apiservices
    controllerrevision controllerrevisions
    daemonset daemonsets ds
    deployment deployments deploy
    replicaset replicasets rs
    statefulset statefulsets sts
    horizontalpodautoscaler horizontalpodautoscalers hpa
    cronjob cronjobs cj
    job jobs
    certificatesigningrequest certificatesigningrequests csr
    lease leases
    endpointslice endpointslices
    flowschema flowschemas
    prioritylevelconfiguration prioritylevelconfigurations
    ingressclass ingressclasses
    ingress ingresses ing
    networkpolicy networkpolicies netpol
    runtimeclass runtimeclasses
    poddisruptionbudget poddisruptionbudgets pdb
    clusterrolebinding clusterrolebindings
    clusterrole clusterroles
    rolebinding rolebindings
    role roles
    priorityclass priorityclasses pc
    csidriver csidrivers
    csinode csinodes
    csistoragecapacity csistoragecapacities
    storageclass storageclasses sc
    volumeattachment volumeattachments
"""
_KUBECTL = grammar(
    _KUBECTL_GLOBALS,
    abbreviations=False,
    subcommands={
        "delete": grammar(
            _KUBECTL_GLOBALS + " --all -A|--all-namespaces --cascade=? --dry-run=?"
            " --field-selector= -f|--filename= --force --grace-period= --ignore-not-found"
            " -k|--kustomize= --now -o|--output= --raw= -R|--recursive -l|--selector= --timeout="
            " --wait=? -i|--interactive",
            abbreviations=False,
            kinds=_KUBECTL_KINDS,
            option_files="--filename --kustomize --raw",  # the objects are named in a file
        ),
    },
    known_subcommands="""
        annotate api-resources api-versions apply attach auth autoscale certificate cluster-info
        completion config cordon cp create debug describe diff drain edit events exec explain
        expose get kustomize label logs options patch plugin port-forward proxy replace rollout
        run scale set taint top uncordon version wait
    """,
)
_DOCKER_GLOBALS = (
    "--config= -c|--context= -D|--debug -H|--host= -l|--log-level= --tls --tlscacert="
    " --tlscert= --tlskey= --tlsverify -v|--version -h|--help"
)
_DOCKER_PRUNE = grammar("-a|--all --filter= -f|--force --volumes", abbreviations=False)
_DOCKER_RM = grammar("-f|--force -l|--link -v|--volumes", abbreviations=False)
_DOCKER_RMI = grammar("-f|--force --no-prune", abbreviations=False)
# Docker 27's top-level shortcuts (`docker rm` is `docker container rm`) and the cobra aliases
# of the management commands (`docker container remove`): one reading for every spelling.
_DOCKER_CONTAINER_SHORTCUTS = (
    "attach commit cp create diff exec export kill logs pause port rename restart rm run start"
    " stats stop top unpause update wait"
)
_DOCKER_IMAGE_SHORTCUTS = "build history import load pull push save tag"
_DOCKER = grammar(
    _DOCKER_GLOBALS,
    abbreviations=False,
    permute=False,
    subcommands={
        "system": grammar(
            "", subcommands={"prune": _DOCKER_PRUNE}, known_subcommands="df info events"
        ),
        "volume": grammar(
            "",
            subcommands={"rm": grammar("-f|--force"), "prune": _DOCKER_PRUNE},
            known_subcommands="create inspect ls",
            aliases={"remove": "rm", "list": "ls"},
        ),
        "image": grammar(
            "",
            subcommands={"rm": _DOCKER_RMI, "prune": _DOCKER_PRUNE},
            known_subcommands="build history import inspect load ls pull push save tag",
            aliases={"remove": "rm", "rmi": "rm", "list": "ls"},
        ),
        "container": grammar(
            "",
            subcommands={"rm": _DOCKER_RM, "prune": _DOCKER_PRUNE},
            known_subcommands="""
                attach commit cp create diff exec export inspect kill logs ls pause port rename
                restart run start stats stop top unpause update wait
            """,
            aliases={"remove": "rm", "list": "ls", "ps": "ls"},
        ),
    },
    known_subcommands="""
        builder buildx compose config context events info init inspect login logout manifest
        network node plugin search secret service stack swarm trust version
    """,
    aliases={
        **{name: f"container {name}" for name in _DOCKER_CONTAINER_SHORTCUTS.split()},
        **{name: f"image {name}" for name in _DOCKER_IMAGE_SHORTCUTS.split()},
        "ps": "container ls",
        "rmi": "image rm",
        "images": "image ls",
    },
)
_TERRAFORM_ACTION = (
    "-auto-approve -var= -var-file= -target= -replace= -lock=? -lock-timeout= -input=?"
    " -parallelism= -refresh=? -refresh-only -state= -state-out= -backup= -compact-warnings"
    " -no-color -json -destroy -out="
)
_TERRAFORM = grammar(
    "-chdir= -help|-h -version|-v",
    abbreviations=False,
    single_dash_long=True,
    permute=False,
    subcommands={
        "apply": grammar(_TERRAFORM_ACTION, abbreviations=False, single_dash_long=True),
        "plan": grammar(_TERRAFORM_ACTION, abbreviations=False, single_dash_long=True),
    },
    known_subcommands="""
        console fmt force-unlock get graph import init login logout metadata output providers
        refresh show state taint test untaint validate version workspace
    """,
    aliases={"destroy": "apply -destroy"},  # "a convenience alias for terraform apply -destroy"
)

GRAMMARS: Final[Mapping[str, Grammar]] = {
    "rm": _RM,
    "cp": _CP,
    "mv": _MV,
    "ln": _LN,
    "chmod": _CHMOD,
    "chown": _CHOWN,
    "chgrp": _CHGRP,
    "shred": _SHRED,
    "truncate": _TRUNCATE,
    "sed": _SED,
    "curl": _CURL,
    "git": _GIT,
    "kubectl": _KUBECTL,
    "docker": _DOCKER,
    "terraform": _TERRAFORM,
}
"""Option grammars by program name (the name without its directory)."""


def program_grammar(name: str) -> Grammar | None:
    """The option grammar of the program ``name`` (``/bin/rm`` is ``rm``), if one is known."""
    return GRAMMARS.get(name.rsplit("/", 1)[-1])


DATA_PROGRAMS: Final = _names(
    """
    basename b2sum base32 base64 cat chgrp chmod chown cksum cmp column comm cp cut date df diff
    dirname du echo egrep expand expr false fgrep file fmt fold free grep groups head hexdump
    hostname id jq join kill link ln locale ls md5sum mkdir mkfifo mknod mv nl nproc numfmt od
    paste pathchk pgrep pkill pr printenv printf ps pwd readlink realpath rev rm rmdir seq
    sha1sum sha224sum sha256sum sha384sum sha512sum shred shuf sleep sort split stat strings sum
    tac tail tee test touch tr tree true truncate tsort tty uname unexpand uniq unlink uptime wc
    which whoami xxd yes [ cd pushd popd dirs exit return shift unset wait jobs fg bg type umask
    ulimit getopts read curl git tar rsync zip unzip gzip gunzip zcat bzip2 bunzip2 xz unxz zstd
    chattr lsattr rg
    """
)
"""Programs that never run an argument as a command, except through the options the analysis
reads as commands (``git -c core.fsmonitor=…``, ``tar --to-command=…``, ``rsync -e …``,
``sort --compress-program=…``, ``split --filter=…``, ``zip -TT``): see :mod:`._executing`.
``git`` is data only for the commands in :data:`GIT_DATA_COMMANDS`; ask :func:`runs_arguments`
about one command rather than this set about a name."""


def runs_arguments(command: SimpleCommand) -> bool:
    """Whether ``command`` may run one of its arguments as a command (S21).

    Runs unless known not to: a deny or ask rule, and the catastrophic-removal check, look
    through the arguments of a command for which this is true.

    False for the programs in :data:`DATA_PROGRAMS`, except ``git`` running a command that is
    not in :data:`GIT_DATA_COMMANDS` (an alias, an external ``git-<name>``, ``git remote-ext``
    …) or one whose name is only known at run time. What a data program runs through its
    options, configuration or environment is listed by the analysis as commands of their own,
    so it is not looked for in the arguments again. True for every other program, wrappers
    included (the analysis lists what they run as well).
    """
    name = command.name
    if name not in DATA_PROGRAMS:
        return True
    if name != "git":
        return False
    parsed = parse_args(_GIT, command.argv[1:])
    if not parsed.operands:
        return False
    subcommand = parsed.operands[0]
    return not (subcommand.literal and subcommand.value in GIT_DATA_COMMANDS)
