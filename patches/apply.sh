#!/bin/sh
# apply.sh DIR: copies each module that patches/series patches, at the version go.mod pins, to DIR,
# applies the patches there in order, and writes DIR/go.mod (go.mod with a replace of each patched
# module by its copy) and DIR/go.sum, for `go run -modfile=DIR/go.mod`. (A `go build -overlay` may
# not replace files of the module cache.) Fails, naming the patch, when one no longer applies: read
# what the upgrade changed in the file it patches, then redo the patch (patches/README.md).
set -eu
out=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cp "$root/go.mod" "$out/go.mod"
cp "$root/go.sum" "$out/go.sum"
while read -r patch module; do
	case "$patch" in '' | \#*) continue ;; esac
	version=$(cd "$root" && go list -m -f '{{.Version}}' "$module")
	if [ ! -d "$out/$module" ]; then
		moddir=$(cd "$root" && go list -m -f '{{.Dir}}' "$module")
		mkdir -p "$(dirname "$out/$module")"
		cp -R "$moddir" "$out/$module"
		chmod -R u+w "$out/$module"
		echo "replace $module => $out/$module" >>"$out/go.mod"
	fi
	# Outside any git repository, git apply patches plain files, refusing any context that moved.
	(cd "$out/$module" && GIT_DIR=/nonexistent git apply -p1 "$here/$patch") || {
		echo "patches/$patch no longer applies to $module@$version: see what the upgrade changed in the file it patches, then redo the patch (patches/README.md)" >&2
		exit 1
	}
done <"$here/series"
