# What a DUT is, a line each: its architecture, its C library, its own cryptobench if any.
# Set first: lib (where its loaders are) and sh (a program of its own). A glibc loader
# wins: a glibc system with musl installed beside it (Debian's musl package) runs the glibc
# build, the full one. `uname -m` says "mips" on both byte orders: a little-endian one
# (OpenWrt's MT7621) is told by its musl loader's name (ld-musl-mipsel-sf.so.1) or by the
# byte order of sh's ELF header (byte 5: 1 little-endian, 2 big-endian).
m=$(uname -m)
case $m in mips | mips64)
    if ls "$lib"/ld-musl-mips*el* >/dev/null 2>&1 ||
        [ "$(dd if="$sh" bs=1 skip=5 count=1 2>/dev/null | od -An -tu1 | tr -d ' ')" = 1 ]; then
        m=${m}el
    fi ;;
esac
echo "$m"
if ls "$lib"/ld-linux* >/dev/null 2>&1 || ls "$lib"64/ld-linux* >/dev/null 2>&1; then
    echo gnu
elif ls "$lib"/ld-musl-* >/dev/null 2>&1; then
    echo musl
else
    echo gnu
fi
cryptobench --version 2>/dev/null || echo none
