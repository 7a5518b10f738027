#!/bin/sh
# The repository's shell scripts parse (bash -n, sh -n for /bin/sh ones)
# and pass shellcheck (warnings and notes included; a deliberate exception
# is a `# shellcheck disable=SCnnnn # why` line above it). Run from anywhere;
# exits non-zero and names the file on the first finding.
set -u
cd "$(dirname "$0")/.." || exit 1
command -v shellcheck >/dev/null || { echo "lint_shell: shellcheck missing (sh scripts/deps.sh installs it)"; exit 1; }
# Every tracked file that is a shell script: *.sh, a #! line naming sh or
# bash, the bash completion.
files=$(git ls-files 2>/dev/null | while read -r f; do
	case "$f" in
	*.sh | *.bash) echo "$f" ;;
	*) head -n1 "$f" 2>/dev/null | grep -qE '^#!(/usr)?/bin/(env )?(ba)?sh' && echo "$f" ;;
	esac
done)
[ -n "$files" ] || { echo "lint_shell: no shell script found (not a git checkout?)"; exit 1; }
bad=0
n=0
for f in $files; do
	n=$((n + 1))
	case "$(head -n1 "$f")" in
	'#!/bin/sh'*) sh -n "$f" || { echo "lint_shell: $f does not parse (sh -n)"; bad=1; } ;;
	*) bash -n "$f" || { echo "lint_shell: $f does not parse (bash -n)"; bad=1; } ;;
	esac
	# Sourced files without a #! line say their shell (# shellcheck shell=);
	# the bash completion is bash.
	case "$f" in
	*.bash) shellcheck -x -s bash "$f" || bad=1 ;;
	*) shellcheck -x "$f" || bad=1 ;;
	esac
done
[ "$bad" = 0 ] && echo "lint_shell: $n shell scripts parse and pass shellcheck"
exit "$bad"
