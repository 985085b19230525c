# usage: sass_filter.sh BINARY PATTERN  -> prints functions whose name matches PATTERN
cuobjdump --dump-sass "$1" | awk -v pat="$2" '/Function :/ {p = ($0 ~ pat)} p' | sed 's@/\* 0x[0-9a-f]* \*/@@' | grep -v '^\s*$'
