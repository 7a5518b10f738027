#!/bin/sh
# Regenerates the generated parts of docs/. Called by `make docs`:
#   sh scripts/update-docs.sh build/tests/format_tables
# The tables of docs/record-format.md are the output of format_tables
# (tests/unit/format_tables.c); they replace everything between the marker
# lines below. tests/unit/test_format_doc.c fails when the two differ.
set -eu

gen=${1:?usage: sh scripts/update-docs.sh PATH/TO/format_tables (run make docs)}
case $gen in /*) ;; *) gen="$PWD/$gen" ;; esac
cd "$(dirname "$0")/.."
doc=docs/record-format.md
begin='<!-- BEGIN GENERATED: format_tables -->'
end='<!-- END GENERATED: format_tables -->'

if [ "$(grep -cxF "$begin" "$doc")" != 1 ] || [ "$(grep -cxF "$end" "$doc")" != 1 ]; then
	echo "update-docs: $doc must contain the lines '$begin' and '$end' exactly once each; restore them and run make docs again" >&2
	exit 1
fi
if [ "$(grep -nxF "$begin" "$doc" | cut -d: -f1)" -gt "$(grep -nxF "$end" "$doc" | cut -d: -f1)" ]; then
	echo "update-docs: in $doc the line '$end' comes before '$begin'; put them in order and run make docs again" >&2
	exit 1
fi

tables=$(mktemp)
out=$(mktemp)
trap 'rm -f "$tables" "$out"' EXIT
if ! "$gen" >"$tables"; then
	echo "update-docs: $gen failed (see its message above); $doc was not changed" >&2
	exit 1
fi

awk -v begin="$begin" -v end="$end" -v tables="$tables" '
	$0 == begin { print; while ((getline line < tables) > 0) print line; skip = 1; next }
	$0 == end { skip = 0 }
	!skip { print }
' "$doc" >"$out"

if cmp -s "$out" "$doc"; then
	echo "update-docs: $doc is up to date"
else
	cat "$out" >"$doc"
	echo "update-docs: regenerated the tables of $doc"
fi
