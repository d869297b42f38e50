#!/bin/bash
# Build the libsym test fixtures: mkfixtures.sh SRC_DIR OUT_DIR
# Every variant a symbolizer meets in the field: build-id debug trees,
# .gnu_debuglink (good and bad CRC), MiniDebugInfo, C++, a shared library
# at a nonzero base, gcc and clang (no .debug_aranges), a rebuilt binary
# whose build-id differs.
set -euo pipefail
src=$1
out=$2
rm -rf "$out"
mkdir -p "$out"
cd "$out"

bid() { readelf -n "$1" | awk '/Build ID:/ { print $3; exit }'; }

# stripped copy + debug file in TREE/.build-id/xx/rest.debug
make_tree() { # BIN TREE STRIPPED
	local b
	b=$(bid "$1")
	mkdir -p "$2/.build-id/${b:0:2}"
	objcopy --only-keep-debug "$1" "$2/.build-id/${b:0:2}/${b:2}.debug"
	cp "$1" "$3"
	strip --strip-all "$3"
}

for cc in gcc clang; do
	$cc -O2 -g -Wl,--build-id -o prog-$cc "$src/prog.c"
	make_tree prog-$cc tree-$cc prog-$cc.stripped
done
# frame pointers kept: for bsym_fp_state (CFA from rbp in bodies, rsp at entries)
gcc -O2 -g -fno-omit-frame-pointer -Wl,--build-id -o fp-gcc "$src/prog.c"
# no frame pointers, rbp used as a general register (BSYM_FP_CLOBBERED)
gcc -O2 -g -fomit-frame-pointer -Wl,--build-id -o clobber-gcc "$src/clobber.c"
for cxx in g++ clang++; do
	$cxx -O2 -g -Wl,--build-id -o cxx-$cxx "$src/cxx.cc"
done

# shared library, every segment 0x200000 above its file offset
gcc -O2 -g -fPIC -shared -Wl,--build-id -Wl,-Ttext-segment=0x200000 -o libfix.so "$src/lib.c"

# .gnu_debuglink, CRC right
mkdir -p dl
cp prog-gcc dl/prog
objcopy --only-keep-debug dl/prog dl/prog.debug
strip --strip-all dl/prog
(cd dl && objcopy --add-gnu-debuglink=prog.debug prog)

# .gnu_debuglink resolved in DEBUGDIR/<recorded dir>/ with a sysroot
mkdir -p dlsys/root/opt/app dlsys/debug/opt/app
cp dl/prog dlsys/root/opt/app/prog
cp dl/prog.debug dlsys/debug/opt/app/prog.debug

# .gnu_debuglink, CRC wrong: same build-id, the debug file changed after
mkdir -p dlbad
cp dl/prog dl/prog.debug dlbad/
printf 'tampered' >>dlbad/prog.debug

# MiniDebugInfo, the way Fedora's find-debuginfo builds it
mkdir -p mini
cp prog-gcc mini/prog
objcopy --only-keep-debug mini/prog mini/full.debug
nm -D mini/prog --format=posix --defined-only | awk '{ print $1 }' | sort >mini/dynsyms
nm mini/full.debug --format=posix --defined-only |
	awk '{ if ($2 == "T" || $2 == "t" || $2 == "D") print $1 }' | sort >mini/funcsyms
comm -13 mini/dynsyms mini/funcsyms >mini/keep
objcopy -S --remove-section .gdb_index --remove-section .comment \
	--keep-symbols=mini/keep mini/full.debug mini/mini.debuginfo
xz -f mini/mini.debuginfo
strip --strip-all mini/prog
objcopy --add-section .gnu_debugdata=mini/mini.debuginfo.xz mini/prog
rm -f mini/full.debug mini/dynsyms mini/funcsyms mini/keep mini/mini.debuginfo.xz

# rebuilt binary at the recorded path: another build-id
mkdir -p mismatch
gcc -O2 -g -Wl,--build-id -DREBUILT -o mismatch/prog "$src/prog.c"

# plain debug dir: the debug file under an arbitrary name
mkdir -p plain
objcopy --only-keep-debug prog-clang plain/whatever-name.dbg

# a vmlinux stand-in: ET_EXEC with _stext
gcc -O2 -g -no-pie -Wl,--build-id -o vmlinux "$src/vmlinux.c"

# a kernel module stand-in: ET_REL with a build-id, debug file in a tree
gcc -O2 -g -c -o kmod.o "$src/kmod.c"
ld -r --build-id -o kmod.ko kmod.o
b=$(bid kmod.ko)
mkdir -p "tree-kmod/.build-id/${b:0:2}"
objcopy --only-keep-debug kmod.ko "tree-kmod/.build-id/${b:0:2}/${b:2}.debug"
rm -f kmod.o


# dwz (Fedora, RHEL, openSUSE debuginfo): two programs' debug files share
# one common file (.gnu_debugaltlink: path + build-id).  tree-dwz holds both
# debug files and the common file by build-id; tree-dwz-noalt lacks the
# common file, and the path the link names does not exist.
gcc -O2 -g -Wl,--build-id -DWORK=work -I"$src" -o dwz-a "$src/dwz.c"
gcc -O2 -g -Wl,--build-id -DWORK=work2 -I"$src" -o dwz-b "$src/dwz.c"
for x in a b; do
	objcopy --only-keep-debug dwz-$x dwz-$x.debug
	cp dwz-$x dwz-$x.stripped
	strip --strip-all dwz-$x.stripped
done
dwz -m dwz-common.debug -M /nonexistent/.dwz/bprof-test-common.debug dwz-a.debug dwz-b.debug
for t in tree-dwz tree-dwz-noalt; do
	for x in a b; do
		b=$(bid dwz-$x)
		mkdir -p $t/.build-id/${b:0:2}
		cp dwz-$x.debug $t/.build-id/${b:0:2}/${b:2}.debug
	done
done
c=$(bid dwz-common.debug)
mkdir -p tree-dwz/.build-id/${c:0:2}
cp dwz-common.debug tree-dwz/.build-id/${c:0:2}/${c:2}.debug

# split DWARF: the skeleton in the binary, the rest in a .dwo found through
# the compilation directory; split-nodwo is the same with its .dwo gone.
gcc -O2 -g -gsplit-dwarf -DWORK=work -I"$src" -c -o split.o "$src/dwz.c"
gcc -Wl,--build-id -o split split.o
mkdir -p nodwo
(cd nodwo && gcc -O2 -g -gsplit-dwarf -DWORK=work -I"$src" -c -o split.o "$src/dwz.c" &&
	gcc -Wl,--build-id -o ../split-nodwo split.o && rm split.dwo)

touch stamp
