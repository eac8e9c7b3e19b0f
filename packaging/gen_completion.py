#!/usr/bin/env python3
"""Writes bash completion for lockscope and lockscope-gui from the programs'
own --help (commands, options), `lockscope workload --list` (workload names)
and `lockscope bench --list-locks` (lock variants and rwsem policies).

usage: gen_completion.py --lockscope BIN [--gui BIN] --out FILE
"""
import argparse
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
import help_text  # noqa: E402

# Options whose value is a file, a directory or a session; the rest are
# completed from the lists below or not at all.
FILE_OPTIONS = ["-o", "--output", "--input", "--session", "--screenshot"]
DIR_OPTIONS = ["--dir", "--session-dir"]
SESSION_COMMANDS = ["report", "diff", "export"]  # their positionals are session files

TEMPLATE = r'''# bash completion for lockscope and lockscope-gui.
# Generated at build time from the programs' --help; do not edit.

_lockscope_commands="@COMMANDS@"
_lockscope_workloads="@WORKLOADS@"
_lockscope_locks="@LOCKS@"
@OPTION_TABLES@

# Completes the word before the cursor as the shell sees it: '@', ':' and '='
# break words for readline (COMP_WORDBREAKS), so candidates are cut to
# what follows the last of them.
_lockscope_reply()
{
    local cur=$1; shift
    local IFS=$'\n'
    COMPREPLY=($(compgen -W "$*" -- "$cur"))
    local broken=${cur%"${cur##*[@:=]}"}
    [[ -n $broken ]] && COMPREPLY=("${COMPREPLY[@]#"$broken"}")
    return 0
}

_lockscope_words()  # one word per line, for _lockscope_reply
{
    printf '%s\n' $*
}

_lockscope()
{
    local line=${COMP_LINE:0:COMP_POINT}
    local cur=${line##*[[:space:]]}
    local prev=""
    (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}
    if (( COMP_CWORD <= 1 )); then
        _lockscope_reply "$cur" "$(_lockscope_words $_lockscope_commands --help --version)"
        return 0
    fi
    local command=${COMP_WORDS[1]}
    local options="_lockscope_options_${command}" values="_lockscope_values_${command}"
    case $prev in
        --workload|-w)
            [[ $command == record ]] && { _lockscope_reply "$cur" "$(_lockscope_words $_lockscope_workloads)"; return 0; } ;;
        --lock|-l)
            if [[ $command == bench ]]; then
                # A comma list: complete its last element.
                local head=""
                [[ $cur == *,* ]] && head=${cur%,*},
                local name candidates=""
                for name in $_lockscope_locks; do candidates+="$head$name"$'\n'; done
                _lockscope_reply "$cur" "$candidates"
                return 0
            fi ;;
@FILE_CASES@
    esac
    if [[ " ${!values} " == *" $prev "* ]]; then
        return 0  # a value nobody can guess
    fi
    if [[ $cur == -* ]]; then
        _lockscope_reply "$cur" "$(_lockscope_words ${!options})"
    elif [[ $command == workload ]]; then
        _lockscope_reply "$cur" "$(_lockscope_words $_lockscope_workloads)"
    elif [[ " @SESSION_COMMANDS@ " == *" $command "* ]]; then
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -f -X '!*.lockscope' -- "$cur") $(compgen -d -- "$cur"))
    fi
    return 0
}
complete -F _lockscope lockscope

_lockscope_gui()
{
    local prev=${COMP_WORDS[COMP_CWORD-1]} cur=${COMP_WORDS[COMP_CWORD]}
    case $prev in
        --page) COMPREPLY=($(compgen -W "overview locks chains holders diff" -- "$cur")); return 0 ;;
        --screenshot) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$_lockscope_options_gui" -- "$cur"))
    else
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -f -X '!*.lockscope' -- "$cur") $(compgen -d -- "$cur"))
    fi
    return 0
}
complete -F _lockscope_gui lockscope-gui
'''


def lines_of(argv):
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.split()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lockscope", required=True)
    ap.add_argument("--gui")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    commands = []
    tables = []
    for c, summary in help_text.commands(a.lockscope):
        h = help_text.Help(help_text.run_help([a.lockscope, c, "--help"]))
        # "... (alias con): ...": the alias completes as the command does.
        for name in [c] + re.findall(r"\(alias (\w+)\)", summary):
            commands.append(name)
            tables.append('_lockscope_options_%s="%s"' % (name, " ".join(h.option_names())))
            tables.append('_lockscope_values_%s="%s"' % (name, " ".join(h.options_taking_values())))
    gui_options = help_text.Help(help_text.run_help([a.gui, "--help"])).option_names() if a.gui else []
    tables.append('_lockscope_options_gui="%s"' % " ".join(gui_options))
    file_cases = [
        "        %s)\n            compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\")); return 0 ;;"
        % "|".join(FILE_OPTIONS),
        "        %s)\n            compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\")); return 0 ;;"
        % "|".join(DIR_OPTIONS),
    ]
    text = (TEMPLATE.replace("@COMMANDS@", " ".join(commands))
            .replace("@WORKLOADS@", " ".join(lines_of([a.lockscope, "workload", "--list"])))
            .replace("@LOCKS@", " ".join(lines_of([a.lockscope, "bench", "--list-locks"])))
            .replace("@OPTION_TABLES@", "\n".join(tables))
            .replace("@FILE_CASES@", "\n".join(file_cases))
            .replace("@SESSION_COMMANDS@", " ".join(SESSION_COMMANDS)))
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
