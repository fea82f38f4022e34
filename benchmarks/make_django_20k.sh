#!/usr/bin/env bash
# A 20k-node workspace for the memory target ("under 400 MB RSS for a 20k-node
# workspace", PRODUCT.md section 4): Django 5.1's `django/` package plus its first 60
# test folders (C-locale order) -> 1,404 files, 20,283 nodes.
#   bash benchmarks/make_django_20k.sh [/work/bench-data]
# then: python benchmarks/lsp_bench.py --repo django-20k
set -euo pipefail
data="${1:-${NEURALMIND_BENCH_DATA:-/work/bench-data}}"
src="$data/Django-5.1"
dst="$data/django-20k"
if [ ! -d "$src" ]; then
  echo "need $src: cd $data && pip download --no-deps --no-binary :all: Django==5.1" \
       "&& tar xzf Django-5.1.tar.gz" >&2
  exit 1
fi
rm -rf "$dst"
mkdir -p "$dst/tests"
cp -r "$src/django" "$src/README.rst" "$dst/"
LC_ALL=C ls "$src/tests" | head -60 | while read -r d; do cp -r "$src/tests/$d" "$dst/tests/"; done
echo "wrote $dst"
