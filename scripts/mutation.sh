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
#                  package must reach; default 90. The exit status is 1
#                  if one does not, 2 if a mutant no longer applies.
#
# The data is in scripts/mutation/:
#   packages.tsv  package <TAB> per-run timeout <TAB> go test -run regexp
#                 (empty: all the package's tests)
#   mutants.tsv   file <TAB> original text <TAB> replacement <TAB> note
#                 [<TAB> why it is equivalent]: one plausible bug each.
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
# never edited. A mutant is caught when the tests fail, timed out when
# they outrun the package's timeout (counted as caught: the tests did not
# pass), not viable when it does not build (not counted), survived when
# the tests pass. Survivors are printed with their note; each is either
# given a test or judged equivalent in mutants.tsv.
#
# Why not a generic tool: gremlins v0.6.0 (go-gremlins/gremlins) cannot
# restrict a run to the tests that matter (it runs a package's whole
# suite per mutant; lfs and sealstore take minutes), and here it marked
# lines its tests cover as not covered and timed every other mutant out.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
data=$root/scripts/mutation
min=${MUTATION_MIN:-90}
cd "$root" || exit 1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

declare -A timeout_of run_of
pkgs=()
while IFS=$'\t' read -r pkg tmo run; do
	[[ -z $pkg || $pkg == \#* ]] && continue
	timeout_of[$pkg]=$tmo
	run_of[$pkg]=$run
	pkgs+=("$pkg")
done <"$data/packages.tsv"

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
stale=0
below=0
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
	echo "   unmutated tests pass in $((SECONDS - t0)) s"
	caught=0 timedout=0 survived=0 notviable=0 equivalent=0 n=0
	survivors=()
	while IFS=$'\t' read -r file orig repl note why; do
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
		printf '{"Replace":{"%s":"%s"}}\n' "$root/$file" "$work/mutant.go" >"$work/overlay.json"
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
			echo "   timed out $label"
		elif grep -q -e '\[build failed\]' -e '\[setup failed\]' "$work/out"; then
			notviable=$((notviable + 1))
			echo "   NOT VIABLE $label (does not build)"
		else
			caught=$((caught + 1))
			echo "   caught    $label"
			[[ -n $why ]] && echo "             (judged equivalent in mutants.tsv, yet caught: revisit)"
		fi
	done <"$data/mutants.tsv"
	viable=$((caught + timedout + survived))
	score=100
	((viable > 0)) && score=$(((caught + timedout) * 100 / viable))
	((score < min)) && below=1
	line=$(printf '%-14s %3d%%  caught %d, timed out %d, survived %d, equivalent %d, not viable %d (%d mutants, %d s)' \
		"$pkg" "$score" "$caught" "$timedout" "$survived" "$equivalent" "$notviable" "$n" "$((SECONDS - t0))")
	summary+=("$line")
	for s in "${survivors[@]}"; do summary+=("    survived: $s"); done
done

echo
echo "mutation scores (least $min%), $((SECONDS - start)) s:"
printf '%s\n' "${summary[@]}"
((stale)) && exit 2
((below)) && exit 1
exit 0
