#!/usr/bin/env bash
# The X side of a GUI test for a GPU host without a display (issue 19): Xvfb, xkbcomp, xdotool, the
# Mesa software GL (libglvnd + swrast) and every library they and attnscope-gui load, except glibc and
# the C++ runtime (the host's own), in one folder with wrappers that set the library path for the X
# processes only. Usage: scripts/device/gui_bundle.sh GUI_BINARY OUT.tar.xz
# On the host: extract, then `source xb/env.sh` (PATH, and the GL variables the GUI needs; it links
# what Xvfb finds by compiled-in paths). scripts/device/gui_gpu_test.sh runs the GUI tests with it.
set -euo pipefail
gui=$1 out=$2
root=$(mktemp -d)/xb
mkdir -p "$root"/{bin,real,lib,dri}
cp /usr/bin/Xvfb /usr/bin/xkbcomp /usr/bin/xdotool "$root/real/"
cp /usr/lib/x86_64-linux-gnu/dri/swrast_dri.so "$root/dri/"
cp -rL /usr/share/X11/xkb "$root/xkb"
libdir=/usr/lib/x86_64-linux-gnu
elfs=("$root"/real/* "$root/dri/swrast_dri.so" "$gui" "$libdir/libGLX_mesa.so.0" "$libdir/libGL.so.1"
      "$libdir/libGLX.so.0" "$libdir/libGLdispatch.so.0" "$libdir/libEGL_mesa.so.0")
skip='^(linux-vdso|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|ld-linux|libstdc\+\+|libgcc_s|libresolv|libcuda|libcublas|libcudnn|libcupti|libnvperf|libnvrtc|libnvidia|libnvJitLink)'
for f in "${elfs[@]}"; do
  ldd "$f" | awk '/=>/ {print $1, $3}' | while read -r name path; do
    [[ $name =~ $skip ]] || cp -nL "$path" "$root/lib/"
  done
done
for f in libGLX_mesa.so.0 libGL.so.1 libGLX.so.0 libGLdispatch.so.0 libglapi.so.0; do cp -nL "$libdir/$f" "$root/lib/"; done
# ICU's 31 MB data library (libxml2's, through LLVM) is never read while rendering: a stub with its one
# symbol keeps the bundle and a GUI binary under one device call's 64 MiB.
icudata=$(basename "$root"/lib/libicudata.so.*)
echo "const char icudt${icudata##*.so.}_dat[16] = {0};" |
  gcc -shared -x c -o "$root/lib/$icudata" -Wl,-soname,"$icudata" -
for t in Xvfb xdotool xkbcomp; do
  cat > "$root/bin/$t" <<W
#!/bin/sh
B=\$(dirname "\$(dirname "\$(readlink -f "\$0")")")
LD_LIBRARY_PATH=\$B/lib LIBGL_DRIVERS_PATH=\$B/dri exec "\$B/real/$t" $([[ $t == Xvfb ]] && echo '-xkbdir "$B/xkb"') "\$@"
W
  chmod +x "$root/bin/$t"
done
cat > "$root/env.sh" <<'W'
# Sourced: the bundle's X tools first on PATH; Mesa's GLX vendor and driver for the GUI, which finds
# the bundle's libraries through an RPATH (patchelf --force-rpath --set-rpath $XB/lib on a copy of
# attnscope-gui), so that no library path reaches the processes it starts (PyTorch's workers).
XB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH=$XB/bin:$PATH LIBGL_DRIVERS_PATH=$XB/dri __GLX_VENDOR_LIBRARY_NAME=mesa
# Xvfb runs /usr/bin/xkbcomp and loads its GLX renderer from /usr/lib/x86_64-linux-gnu/dri, both by
# compiled-in paths: linked there where missing (root on the host).
[ -e /usr/bin/xkbcomp ] || ln -s "$XB/bin/xkbcomp" /usr/bin/xkbcomp
mkdir -p /usr/lib/x86_64-linux-gnu/dri
[ -e /usr/lib/x86_64-linux-gnu/dri/swrast_dri.so ] || ln -s "$XB/dri/swrast_dri.so" /usr/lib/x86_64-linux-gnu/dri/swrast_dri.so
W
tar -C "$(dirname "$root")" -cf - xb | xz -T2 -6 > "$out"
echo "$(ls "$root/lib" | wc -l) libraries; $(du -sh "$out" | cut -f1) in $out"
