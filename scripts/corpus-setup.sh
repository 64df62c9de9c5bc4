# corpus-setup.sh is sourced by the corpus scripts (ptoas-corpus-report.sh,
# ptoas-corpus-cli.sh) with root set to the checkout and bin to a ptoasm
# binary or "": it builds one into a temporary directory when bin is empty,
# sets dir to the fetched corpus and exits 2 when there is none.
dir="$root/corpus"
if [ -z "$bin" ]; then
	bin=$(mktemp -d)/ptoasm
	(cd "$root" && go build -o "$bin" ./cmd/ptoasm) || exit 2
fi
if [ ! -d "$dir" ]; then
	echo "no corpus/ (run scripts/fetch-ptoas-corpus.sh)" >&2
	exit 2
fi
