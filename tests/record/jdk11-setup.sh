#!/usr/bin/env bash
# Unpack Debian 11's OpenJDK 11 (openjdk-11-jre-headless, from bullseye's
# archive) into DIR, once, without installing it: bookworm has no
# OpenJDK 11, and the JVM walk (tests/record/jvm.sh, BPROF_JVM=11) must be
# tested on one.  Its java needs only what bookworm's libc, libstdc++ and
# zlib give.  apt-get reads bullseye's index with a configuration of its
# own under DIR (the machine's sources are not touched) and downloads the
# package; dpkg-deb unpacks it.  A lock keeps parallel tests from doing it
# twice, a marker says it was done whole.
# Usage: jdk11-setup.sh DIR   -> prints the JDK's home (DIR/root/usr/lib/jvm/...)
set -euo pipefail
dir=${1:?usage: jdk11-setup.sh DIR}
home=$dir/root/usr/lib/jvm/java-11-openjdk-amd64
mkdir -p "$dir"
if [ ! -f "$dir/.bprof-ok" ]; then
	exec 9>"$dir/.lock"
	flock 9
	if [ ! -f "$dir/.bprof-ok" ]; then
		apt=$dir/apt
		rm -rf "$apt" "$dir/root" "$dir"/*.deb
		mkdir -p "$apt/lists/partial" "$apt/archives/partial"
		echo "deb http://deb.debian.org/debian bullseye main" > "$apt/sources.list"
		o=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
		   -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt" -o "Dir::Cache::archives=$apt/archives"
		   -o APT::Sandbox::User=root -o Debug::NoLocking=1 -qq)
		echo "jdk11-setup: reading bullseye's index, downloading openjdk-11-jre-headless" >&2
		apt-get "${o[@]}" update >&2
		(cd "$dir" && apt-get "${o[@]}" download openjdk-11-jre-headless >&2)
		dpkg-deb -x "$dir"/openjdk-11-jre-headless_*.deb "$dir/root"
		"$home/bin/java" -version >&2
		rm -rf "$apt" "$dir"/*.deb
		touch "$dir/.bprof-ok"
	fi
fi
# The package's configuration (java.security, logging.properties, ...) is
# reached through absolute links into /etc/java-11-openjdk, which is under
# DIR/root here, not under /: a JVM that reads it (ManagementFactory reads
# java.security) died with "Error loading java.security file".  The links
# are pointed into DIR/root; idempotent, so a cache unpacked before this
# is mended too.
find "$dir/root/usr/lib/jvm" -type l -lname '/etc/*' -print0 |
	while IFS= read -r -d '' l; do
		ln -sfn "$dir/root$(readlink "$l")" "$l"
	done
echo "$home"
