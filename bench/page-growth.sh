#!/bin/sh
# The nested page's growth (issue 35, point 4), this checkout against BASE
# in one run: BenchmarkPageGrowth (graph/page_growth_bench_test.go) serves
# the one-row nested page and the ids page on 200 and on 10,000 sessions;
# each tree's test binary runs ROUNDS times, the two interleaved, and the
# medians and ratios come out as a markdown table. BASE is checked out in a
# git worktree of its own, with this checkout's benchmark and its loader
# (test files only: the server's code is BASE's) copied in.
#
#   bench/page-growth.sh BASE [ROUNDS] [BENCHTIME]     (make bench-growth BASE=...)
#
# DATABASE_URL names the PostgreSQL, as for make test.
set -eu
base=${1:?usage: bench/page-growth.sh BASE [ROUNDS] [BENCHTIME]}
rounds=${2:-5}
benchtime=${3:-300x}
here=$(git rev-parse --show-toplevel)
work=$(mktemp -d "${TMPDIR:-/tmp}/page-growth.XXXXXX")
git -C "$here" worktree add --quiet --detach "$work/base" "$base"
trap 'git -C "$here" worktree remove --force "$work/base"; rm -rf "$work"' EXIT
trap 'exit 1' INT TERM
for f in graph/page_growth_bench_test.go graph/compiled_page_bench_test.go \
	internal/grown/pages.go internal/grown/pages.sql internal/apitest/grown.go; do
	cp "$here/$f" "$work/base/$f"
done
(cd "$work/base" && go test -c -o "$work/base.test" ./graph)
(cd "$here" && go test -c -o "$work/head.test" ./graph)
echo "base $(git -C "$here" rev-parse --short "$base"), head $(git -C "$here" rev-parse --short HEAD)$(git -C "$here" diff --quiet HEAD || echo ' (uncommitted changes)'); $(uptime)" >&2
for round in $(seq "$rounds"); do
	for v in base head; do
		tree=$work/base; [ "$v" = head ] && tree=$here
		(cd "$tree/graph" && "$work/$v.test" -test.run '^$' -test.bench '^BenchmarkPageGrowth$' \
			-test.benchtime "$benchtime") | tee -a "$work/$v.out" >&2
	done
done
echo "$(uptime)" >&2
# One line per value: tree, page, metric, value; then the median of each.
for v in base head; do
	awk -v v="$v" '/^BenchmarkPageGrowth\// {
		split($1, name, "/"); sub(/-[0-9]+$/, "", name[3]); sub(/sessions=/, "", name[3])
		print v, name[2] "/" name[3], "ms", $3 / 1e6
		for (i = 5; i < NF; i += 2) print v, name[2] "/" name[3], $(i + 1), $i
	}' "$work/$v.out"
done | sort -k1,1 -k2,2 -k3,3 -k4,4g | awk '
	{ key = $1 " " $2 " " $3; if (key != last && last != "") flush(); last = key; vals[++n] = $4 }
	function flush() { m = (n % 2) ? vals[(n + 1) / 2] : (vals[n / 2] + vals[n / 2 + 1]) / 2; print last, m; n = 0 }
	END { flush() }' > "$work/medians"
awk -v rounds="$rounds" '
	{ med[$1 " " $2 " " $3] = $4 }
	function r(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "–" }
	END {
		printf "medians of %d rounds; ms is wall time per page, one client\n\n", rounds
		print "| page, sessions | base: ms / pg-exec-µs / pg-hits | head: ms / pg-exec-µs / pg-hits | head ÷ base: ms / pg-exec-µs |"
		print "| --- | ---: | ---: | ---: |"
		split("nested/200 nested/10000 ids/200 ids/10000", pages, " ")
		for (i = 1; i <= 4; i++) {
			p = pages[i]; b = "base " p; h = "head " p
			printf "| %s | %.2f / %.0f / %.0f | %.2f / %.0f / %.0f | %s / %s |\n", p,
				med[b " ms"], med[b " pg-exec-µs/page"], med[b " pg-hits/page"],
				med[h " ms"], med[h " pg-exec-µs/page"], med[h " pg-hits/page"],
				r(med[h " ms"], med[b " ms"]), r(med[h " pg-exec-µs/page"], med[b " pg-exec-µs/page"])
		}
		print ""
		print "| growth, 10,000 ÷ 200 sessions | base: ms / pg-exec-µs | head: ms / pg-exec-µs |"
		print "| --- | ---: | ---: |"
		split("nested ids", kinds, " ")
		for (i = 1; i <= 2; i++) {
			k = kinds[i]
			printf "| %s | %s / %s | %s / %s |\n", k,
				r(med["base " k "/10000 ms"], med["base " k "/200 ms"]), r(med["base " k "/10000 pg-exec-µs/page"], med["base " k "/200 pg-exec-µs/page"]),
				r(med["head " k "/10000 ms"], med["head " k "/200 ms"]), r(med["head " k "/10000 pg-exec-µs/page"], med["head " k "/200 pg-exec-µs/page"])
		}
	}' "$work/medians"
