#!/usr/bin/env bash
# Mutation run for the packages that guard data and access (issue 23).
# Not part of the default test run: it rebuilds a package's tests once per
# mutant.
#
# Usage: scripts/mutation.sh [package ...]
#   package   a package directory from scripts/mutation/packages.tsv
#             (crypto, s3api/sigv4, ...); default: all of them
# Environment:
#   MUTATION_MIN   least score (percent of viable mutants caught) each
#                  package must reach; default 90.
#   MUTATION_DATA  the directory holding packages.tsv and mutants.tsv;
#                  default scripts/mutation (another one tries the script
#                  on scratch data).
# Exit status: 0 when every package reaches the score; 1 when one does not,
# or has no viable mutant (nothing measured), or its tests fail unmutated;
# 2 when a mutant no longer applies (stale) or belongs to no package of
# packages.tsv; 3 when a run neither passed, failed a test, failed to
# build nor timed out (a go-command or environment failure: its output is
# shown).
#
# The data is in scripts/mutation/ (fields split on each tab: an empty
# field stays empty):
#   packages.tsv  package <TAB> per-run timeout <TAB> go test -run regexp
#                 (empty: all the package's tests)
#   mutants.tsv   file <TAB> original text <TAB> replacement <TAB> note
#                 [<TAB> why it is equivalent]: one plausible bug each.
#                 An empty replacement deletes the original text.
#                 The file's directory must be a package of packages.tsv
#                 (a row that is not is reported and fails the run).
#                 The original text must occur on exactly one line of the
#                 file; a mutant that no longer matches is reported as
#                 stale, never skipped silently. Adding a file to the run
#                 is adding its mutants here. A mutant judged equivalent
#                 (no test can tell it from the code) says why in the
#                 fifth field: surviving, it is counted apart and out of
#                 the score; caught, it is reported so the judgment is
#                 revisited.
#
# Each mutant is applied through `go test -overlay`, so the work tree is
# never edited. A mutant is caught when a test fails (the output shows
# `--- FAIL`, `panic:` or the package's FAIL line with the time its tests
# ran), timed out when the tests outrun the package's timeout (counted as
# caught: the tests did not pass; printed with the time taken and the
# unmutated run's, so a hang is visible), not viable when it does not
# build (not counted), survived when the tests pass; anything else is a
# runner error (exit 3). Survivors are printed with their note; each is either
# given a test or judged equivalent in mutants.tsv.
#
# Why not a generic tool: gremlins v0.6.0 (go-gremlins/gremlins) cannot
# restrict a run to the tests that matter (it runs a package's whole
# suite per mutant; lfs and sealstore take minutes), and here it marked
# lines its tests cover as not covered and timed every other mutant out.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
data=${MUTATION_DATA:-$root/scripts/mutation}
data=$(cd "$data" && pwd) || exit 2
min=${MUTATION_MIN:-90}
cd "$root" || exit 1
command -v python3 >/dev/null || { echo "python3 is needed (it writes the overlay JSON)" >&2; exit 3; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# split_tabs line: the line's tab-separated fields into f, an empty field
# kept (read with IFS=$'\t' would merge adjacent tabs: a tab is IFS
# whitespace).
split_tabs() {
	local s=$1
	f=()
	while [[ $s == *$'\t'* ]]; do
		f+=("${s%%$'\t'*}")
		s=${s#*$'\t'}
	done
	f+=("$s")
}

declare -A timeout_of run_of
pkgs=()
while IFS= read -r row || [[ -n $row ]]; do
	split_tabs "$row"
	pkg=${f[0]}
	[[ -z $pkg || $pkg == \#* ]] && continue
	timeout_of[$pkg]=${f[1]:-}
	run_of[$pkg]=${f[2]:-}
	pkgs+=("$pkg")
done <"$data/packages.tsv"

# Every mutant belongs to a package of packages.tsv; one that does not
# (a directory left out, a misspelt path) would never run.
stale=0
nrow=0
orphans=0
while IFS= read -r row || [[ -n $row ]]; do
	nrow=$((nrow + 1))
	split_tabs "$row"
	file=${f[0]}
	[[ -z $file || $file == \#* ]] && continue
	if [[ -z ${timeout_of[$(dirname "$file")]:-} ]]; then
		echo "ORPHAN    mutants.tsv line $nrow: $file is in no package of $data/packages.tsv; it would never run"
		orphans=$((orphans + 1))
		stale=1
	fi
done <"$data/mutants.tsv"

if (($# > 0)); then
	for p in "$@"; do
		[[ -n ${timeout_of[$p]:-} ]] || { echo "unknown package $p (see $data/packages.tsv)" >&2; exit 2; }
	done
	pkgs=("$@")
fi

gotest() { # pkg overlay-json-or-empty
	local pkg=$1 ov=$2 args=(-count=1 -vet=off)
	[[ -n ${run_of[$pkg]} ]] && args+=(-run "${run_of[$pkg]}")
	[[ -n $ov ]] && args+=(-overlay "$ov")
	timeout "${timeout_of[$pkg]}" nice -n 19 go test "${args[@]}" "./$pkg" >"$work/out" 2>&1
}

start=$SECONDS
below=0
runerr=0
summary=()
for pkg in "${pkgs[@]}"; do
	echo "== $pkg (timeout ${timeout_of[$pkg]}, -run '${run_of[$pkg]}')"
	t0=$SECONDS
	if ! gotest "$pkg" ""; then
		echo "   the tests fail without a mutant; skipping $pkg"
		tail -20 "$work/out"
		below=1
		continue
	fi
	base=$((SECONDS - t0))
	echo "   unmutated tests pass in $base s"
	caught=0 timedout=0 survived=0 notviable=0 equivalent=0 n=0
	survivors=()
	while IFS= read -r row || [[ -n $row ]]; do
		split_tabs "$row"
		file=${f[0]} orig=${f[1]:-} repl=${f[2]:-} note=${f[3]:-} why=${f[4]:-}
		[[ -z $file || $file == \#* ]] && continue
		[[ $(dirname "$file") == "$pkg" ]] || continue
		n=$((n + 1))
		label="$file: $note"
		lines=$(grep -cF -- "$orig" "$file" 2>/dev/null)
		if [[ $lines != 1 ]]; then
			echo "   STALE     $label (the original text is on ${lines:-0} lines)"
			stale=1
			continue
		fi
		content=$(<"$file")
		mutated=${content/"$orig"/"$repl"}
		printf '%s\n' "$mutated" >"$work/mutant.go"
		python3 -c 'import json, sys; print(json.dumps({"Replace": {sys.argv[1]: sys.argv[2]}}))' \
			"$root/$file" "$work/mutant.go" >"$work/overlay.json" || exit 3
		t1=$SECONDS
		gotest "$pkg" "$work/overlay.json"
		rc=$?
		if ((rc == 0)) && [[ -n $why ]]; then
			equivalent=$((equivalent + 1))
			echo "   equivalent $label ($why)"
		elif ((rc == 0)); then
			survived=$((survived + 1))
			survivors+=("$label")
			echo "   SURVIVED  $label"
		elif ((rc == 124)); then
			timedout=$((timedout + 1))
			echo "   timed out $label (after $((SECONDS - t1)) s; unmutated: $base s)"
		elif grep -q -e '\[build failed\]' -e '\[setup failed\]' "$work/out"; then
			notviable=$((notviable + 1))
			echo "   NOT VIABLE $label (does not build)"
		elif grep -qE -e '^[[:space:]]*--- FAIL' -e '^panic:' -e $'^FAIL\t[^\t]+\t[0-9.]+s$' "$work/out"; then
			caught=$((caught + 1))
			echo "   caught    $label"
			[[ -n $why ]] && echo "             (judged equivalent in mutants.tsv, yet caught: revisit)"
		else
			runerr=1
			echo "   RUNNER ERROR $label (exit $rc: no test failed, no build failure, no timeout); output:"
			tail -20 "$work/out" | sed 's/^/      /'
		fi
	done <"$data/mutants.tsv"
	viable=$((caught + timedout + survived))
	if ((viable > 0)); then
		score=$(((caught + timedout) * 100 / viable))
		((score < min)) && below=1
		pct=$(printf '%3d%%' "$score")
	else
		below=1 # nothing measured: not a pass
		pct='  -  (no viable mutant)'
	fi
	line=$(printf '%-14s %s  caught %d, timed out %d, survived %d, equivalent %d, not viable %d (%d mutants, %d s)' \
		"$pkg" "$pct" "$caught" "$timedout" "$survived" "$equivalent" "$notviable" "$n" "$((SECONDS - t0))")
	summary+=("$line")
	for s in "${survivors[@]}"; do summary+=("    survived: $s"); done
done

echo
echo "mutation scores (least $min%), $((SECONDS - start)) s:"
printf '%s\n' "${summary[@]}"
((orphans)) && echo "$orphans mutants in no package of packages.tsv (ORPHAN above)"
((runerr)) && exit 3
((stale)) && exit 2
((below)) && exit 1
exit 0
