// SPDX-License-Identifier: Apache-2.0
/*
 * cxxwork [DURATION]: C++ frames for demangling tests: a class template
 * method, a function template instantiated twice, a namespace, a lambda and
 * an inline function folded into its caller.
 */
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <vector>

/* see common.h: GCC 12 sets up no frame in functions that call nothing */
#define KEEP_FRAME() __asm__ volatile("" : : "r"(__builtin_frame_address(0)))

namespace bprof_demo {

template <typename T>
class Accumulator {
public:
	__attribute__((noinline)) T accumulate(const std::vector<T> &v, int rounds)
	{
		T s = T();

		KEEP_FRAME();
		for (int r = 0; r < rounds; r++)
			for (const T &x : v)
				s = mix(s, x);
		return s;
	}

private:
	static inline T mix(T a, T b) { return a * T(3) + b; } // inlined
};

template <typename T>
__attribute__((noinline)) T crunch(int n)
{
	std::vector<T> v(n);
	for (int i = 0; i < n; i++)
		v[i] = T(i % 97);
	Accumulator<T> acc;
	return acc.accumulate(v, 200);
}

} // namespace bprof_demo

static double now_s()
{
	using namespace std::chrono;
	return duration<double>(steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char **argv)
{
	double dur = argc > 1 ? std::atof(argv[1]) : 5.0;
	double deadline = now_s() + dur;
	volatile double sink = 0;
	auto step = [&](int n) __attribute__((noinline)) {
		sink = sink + bprof_demo::crunch<double>(n) + (double)bprof_demo::crunch<uint32_t>(n);
	};

	while (now_s() < deadline)
		step(4096);
	std::printf("%g\n", (double)sink);
	return 0;
}
