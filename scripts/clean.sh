#!/bin/sh
# `make clean`: remove BUILD_DIR and REPORTS_DIR (default build/ and reports/), and only them, only when each is one
# folder the project writes: never the checkout or a folder above it, never a folder holding files git tracks
# (BUILD_DIR='build images' or BUILD_DIR=. is refused, one line each), never the virtual environment.
# The values come from the environment (the Makefile exports them): they never reach the shell as code.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$root"

# one printable line: a control character a variable holds is shown as '?'
shown() {
    printf '%s' "$1" | tr -c '[:print:]' '?'
}

die() {
    echo "make clean: $*" >&2
    exit 2
}

for var in BUILD_DIR REPORTS_DIR; do
    eval "value=\${$var-}"
    if [ -z "$value" ]; then
        [ "$var" = BUILD_DIR ] && value=build || value=reports
    fi
    case $value in
        *[[:space:]]* | *[[:cntrl:]]*)
            die "$var='$(shown "$value")' holds a space or a control character: give the one folder to remove (clean removes one $var), e.g. $var=build" ;;
    esac
    if [ ! -e "$value" ] && [ ! -L "$value" ]; then
        continue                          # nothing written there yet
    fi
    if [ -L "$value" ] || [ ! -d "$value" ]; then
        die "$var=$(shown "$value") is not a folder (a file or a link): clean removes only the folders the project writes; remove it by hand if you mean it"
    fi
    abs=$(cd "$value" && pwd -P)
    case $root/ in
        "$abs"/*) die "$var=$(shown "$value") is the checkout or a folder above it: give the folder the project writes into, e.g. $var=build" ;;
    esac
    if [ -n "${HOME:-}" ] && [ "$abs" = "$(cd "$HOME" 2>/dev/null && pwd -P || echo "$HOME")" ]; then
        die "$var=$(shown "$value") is the home folder: give the folder the project writes into, e.g. $var=build"
    fi
    venv=${VENV:-.venv}
    if [ -d "$venv" ] && [ "$abs" = "$(cd "$venv" && pwd -P)" ]; then
        die "$var=$(shown "$value") is the virtual environment: clean keeps it (rm -rf $(shown "$venv") removes it)"
    fi
    case $abs/ in
        "$root"/*)
            tracked=$(git -C "$root" ls-files -- "$abs" 2>/dev/null | head -n 1)
            if [ -n "$tracked" ]; then
                die "$var=$(shown "$value") holds files the repository tracks ($(shown "$tracked")): clean removes only generated folders; give e.g. $var=build"
            fi
            if [ -e "$abs/.git" ]; then
                die "$var=$(shown "$value") holds a git repository: clean removes only generated folders"
            fi
            ;;
        *)
            # outside the checkout git cannot tell: every entry must be one the project writes there
            for entry in "$abs"/* "$abs"/.[!.]* "$abs"/..?*; do
                [ -e "$entry" ] || [ -L "$entry" ] || continue
                name=${entry##*/}
                case $name in
                    logs | cache | k8s | slurm | bench | oci | wheels | push | *.json | *.xml | *.log | *.tar | .render-*.lock) ;;
                    *) die "$var=$(shown "$value") holds $(shown "$name"), which the project does not write there: clean removes only generated folders; remove it by hand if you mean it" ;;
                esac
            done
            ;;
    esac
done

for var in BUILD_DIR REPORTS_DIR; do
    eval "value=\${$var-}"
    if [ -z "$value" ]; then
        [ "$var" = BUILD_DIR ] && value=build || value=reports
    fi
    if [ "$var" = REPORTS_DIR ] && [ -f "$value/push/pushed.json" ] && [ ! -L "$value/push" ]; then
        # the push record is what make report, gate, slurm, isolate and k8s-verify pin digests by: kept
        for entry in "$value"/* "$value"/.[!.]* "$value"/..?* "$value"/push/* "$value"/push/.[!.]* "$value"/push/..?*; do
            [ -e "$entry" ] || [ -L "$entry" ] || continue
            case $entry in "$value/push" | "$value/push/pushed.json") continue ;; esac
            rm -rf -- "$entry"
        done
        echo "rm -rf -- $value (kept $value/push/pushed.json, the push record; rm it by hand to forget the pushes)"
    elif [ -d "$value" ]; then
        echo "rm -rf -- $value"
        rm -rf -- "$value"
    fi
done
