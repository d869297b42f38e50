// SPDX-License-Identifier: Apache-2.0
// demangle.cc - the only C++ in libsym: a C entry point to __cxa_demangle.
#include <cstdlib>
#include <cxxabi.h>

extern "C" char *bsym_cxx_demangle(const char *mangled);

extern "C" char *bsym_cxx_demangle(const char *mangled)
{
	int status = 0;
	try {
		char *r = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
		if (status != 0) {
			std::free(r);
			return nullptr;
		}
		return r;
	} catch (...) {
		return nullptr; // never let an exception cross into C
	}
}
