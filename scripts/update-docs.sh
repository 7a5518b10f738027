#!/bin/sh
# Regenerates the generated parts of docs/ and dist/. Called by `make docs`:
#   sh scripts/update-docs.sh build/tests/format_tables build/tests/tools/cli_docs
# - The tables of docs/record-format.md are the output of format_tables
#   (tests/unit/format_tables.c); tests/unit/test_format_doc.c fails when
#   the two differ.
# - The man page's synopsis and reference sections and the bash completion
#   are the output of cli_docs (user/cli/cli_docs.c: from the table of
#   commands); tests/integration/test_cli.c fails when they differ.
# A generated part replaces everything between its marker lines.
set -eu

tables_gen=${1:?usage: sh scripts/update-docs.sh PATH/TO/format_tables PATH/TO/cli_docs (run make docs)}
cli_gen=${2:?usage: sh scripts/update-docs.sh PATH/TO/format_tables PATH/TO/cli_docs (run make docs)}
case $tables_gen in /*) ;; *) tables_gen="$PWD/$tables_gen" ;; esac
case $cli_gen in /*) ;; *) cli_gen="$PWD/$cli_gen" ;; esac
cd "$(dirname "$0")/.."

gen=$(mktemp)
out=$(mktemp)
trap 'rm -f "$gen" "$out"' EXIT

# update DOC WHAT: puts $out in DOC's place when it differs.
update() {
	if cmp -s "$out" "$1"; then
		echo "update-docs: $1 is up to date"
	else
		cat "$out" >"$1"
		echo "update-docs: regenerated $2 of $1"
	fi
}

# paste DOC BEGIN END WHAT COMMAND...: the output of COMMAND between DOC's
# lines BEGIN and END.
paste() {
	doc=$1 begin=$2 end=$3 what=$4
	shift 4
	if [ "$(grep -cxF "$begin" "$doc")" != 1 ] || [ "$(grep -cxF "$end" "$doc")" != 1 ]; then
		echo "update-docs: $doc must contain the lines '$begin' and '$end' exactly once each; restore them and run make docs again" >&2
		exit 1
	fi
	if [ "$(grep -nxF "$begin" "$doc" | cut -d: -f1)" -gt "$(grep -nxF "$end" "$doc" | cut -d: -f1)" ]; then
		echo "update-docs: in $doc the line '$end' comes before '$begin'; put them in order and run make docs again" >&2
		exit 1
	fi
	if ! "$@" >"$gen"; then
		echo "update-docs: $1 failed (see its message above); $doc was not changed" >&2
		exit 1
	fi
	# through the environment: awk -v would read the backslashes of roff's markers
	BEGIN_LINE=$begin END_LINE=$end GEN=$gen awk '
		$0 == ENVIRON["BEGIN_LINE"] { print; while ((getline line < ENVIRON["GEN"]) > 0) print line; skip = 1; next }
		$0 == ENVIRON["END_LINE"] { skip = 0 }
		!skip { print }
	' "$doc" >"$out"
	update "$doc" "$what"
}

paste docs/record-format.md '<!-- BEGIN GENERATED: format_tables -->' '<!-- END GENERATED: format_tables -->' \
	"the tables" "$tables_gen"
man=dist/man/man8/inferscope-bpf.8
for part in synopsis reference; do
	paste "$man" ".\\\" BEGIN GENERATED: cli_docs man $part" ".\\\" END GENERATED: cli_docs man $part" \
		"the $part" "$cli_gen" man "$part"
done
if ! "$cli_gen" bash >"$out"; then
	echo "update-docs: $cli_gen bash failed (see its message above); dist/inferscope-bpf.bash was not changed" >&2
	exit 1
fi
update dist/inferscope-bpf.bash "the completion"
