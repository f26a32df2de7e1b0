#!/bin/sh
# Stands in for cmake so that shaderc-sys can never silently fall back to building shaderc
# from source (about 25 minutes on 2 cores). It only runs when .deps/shaderc is missing.
echo "error: shaderc-sys could not find .deps/shaderc/libshaderc_combined.a; run scripts/setup.sh (or make test) first" >&2
exit 1
