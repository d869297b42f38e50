// SPDX-License-Identifier: Apache-2.0
/*
 * record/runtimes.c: which runtimes a program is, from its ELF file (its
 * name, the libraries it needs, the symbols it imports or exports), on
 * this machine's own programs (tools/install-deps.sh installs them).
 */
#include <criterion/criterion.h>
#include <unistd.h>

#include "runtimes.h"

Test(runtimes, a_program_that_is_none)
{
	cr_assert_eq(runtimes_of_elf("/usr/bin/true"), 0);
	cr_assert_eq(runtimes_of_elf("/nonexistent/program"), 0);
}

Test(runtimes, debian_python_by_its_exports)
{
	cr_assert(access("/usr/bin/python3.11", X_OK) == 0, "python3.11 missing");
	cr_assert_eq(runtimes_of_elf("/usr/bin/python3.11"), RUNTIME_PYTHON);
}

Test(runtimes, node_by_its_v8dbg_symbols)
{
	cr_assert(access("/usr/bin/node", X_OK) == 0, "node missing");
	cr_assert_eq(runtimes_of_elf("/usr/bin/node"), RUNTIME_V8);
}

Test(runtimes, the_java_launcher_by_its_library)
{
	const char *java = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java";

	cr_assert(access(java, X_OK) == 0, "%s missing", java);
	cr_assert_eq(runtimes_of_elf(java), RUNTIME_JVM);
}
