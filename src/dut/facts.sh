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
