// SPDX-License-Identifier: Apache-2.0
/*
 * Display names: C++ and Rust (legacy and v0) demangled, PLT stubs keep
 * "@plt", anything that is not a valid mangled name is printed as it is.
 * The v0 names were emitted by rustc 1.95 (-C symbol-mangling-version=v0)
 * for a small program and the standard library it links.
 */
#include <criterion/criterion.h>
#include "bsym.h"
#include "bsym_internal.h"

static struct bsym_ctx *mkctx(unsigned flags)
{
	struct bsym_opts o = {
		.sz = sizeof(o),
		.flags = flags | BSYM_NO_SYSTEM_DEBUG | BSYM_NO_DEBUGINFOD,
	};
	struct bsym_ctx *ctx;

	cr_assert_eq(bsym_create(&ctx, &o), 0);
	return ctx;
}

static const struct {
	const char *raw, *shown;
} cases[] = {
	/* Rust v0 */
	{ "_RNvCskK7mfDs1mzF_1m4main", "m::main" },
	{ "_RNvNtNtCsjrHSEGnQ3l9_3std6thread11main_thread4MAIN.0", "std::thread::main_thread::MAIN" },
	{ "_RINvNtNtNtCsgEmfK2I1SDS_4core5slice4sort6stable14driftsort_mainNtNtCs4X4t9plMPHF_"
	  "9addr2line8function22InlinedFunctionAddressNCINvMNtCslNYArtu3iFV_5alloc5sliceSBZ_"
	  "7sort_byNCNvMs1_B11_INtB11_8FunctionINtNtNtCsduwmD7cSIQq_5gimli4read12endian_slice"
	  "11EndianSliceNtNtB3h_9endianity12LittleEndianEE5parse0E0INtNtB26_3vec3VecBZ_"
	  "EECsjrHSEGnQ3l9_3std",
	  "core::slice::sort::stable::driftsort_main::<addr2line::function::InlinedFunctionAddress, "
	  "<[addr2line::function::InlinedFunctionAddress]>::sort_by<<addr2line::function::Function<"
	  "gimli::read::endian_slice::EndianSlice<gimli::endianity::LittleEndian>>>::parse::"
	  "{closure#0}>::{closure#0}, alloc::vec::Vec<addr2line::function::InlinedFunctionAddress>>" },
	{ "_RNvCskK7mfDs1mzF_1m4main@plt", "m::main@plt" },
	/* not valid v0: printed raw, never a guess */
	{ "_Rfoo", "_Rfoo" },
	{ "_RNvC", "_RNvC" },
	{ "_R", "_R" },
	/* Rust legacy (Itanium-shaped, hash dropped) */
	{ "_ZN3std2rt10lang_start17h0123456789abcdefE", "std::rt::lang_start" },
	/* C++ */
	{ "_ZN3foo3barEv", "foo::bar()" },
	{ "_ZN3foo3barEv@plt", "foo::bar()@plt" },
	/* plain C */
	{ "main", "main" },
	{ "_Rust_is_not_mangled_here", "_Rust_is_not_mangled_here" },
};

Test(demangle, cxx_and_rust_names)
{
	struct bsym_ctx *ctx = mkctx(0);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *d = bsym_display_name(ctx, cases[i].raw);

		cr_expect_str_eq(d, cases[i].shown, "%s: shown as '%s', expected '%s'", cases[i].raw,
				 d, cases[i].shown);
		/* the cache gives the same answer */
		cr_expect_eq(bsym_display_name(ctx, cases[i].raw), d);
	}
	bsym_destroy(ctx);
}

Test(demangle, no_demangle_keeps_raw_names)
{
	struct bsym_ctx *ctx = mkctx(BSYM_NO_DEMANGLE);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_str_eq(bsym_display_name(ctx, cases[i].raw), cases[i].raw);
	bsym_destroy(ctx);
}
