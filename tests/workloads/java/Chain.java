// Java workload of known shape for bprof's HotSpot frames (tests/record/jvm.sh).
// The padding blocks were written by a script; every method but main is kept
// from inlining (but step) by a never-taken padding block (bigger than C2's
// FreqInlineSize), so that each call is a frame of its own when compiled.
// Phases, each ARG/3 ms: a hot chain main -> middle -> step -> leaf (step
// small enough to be inlined into middle, an inlined frame), a recursion
// main -> recurse^12 -> bottom, an allocation loop main -> alloc.
public class Chain {
    static double leaf(double x) {
        double s = 0;
        for (int i = 1; i < 200; i++) {
            s += Math.sqrt(x + i);
        }
        if (s < -1e300) { // padding: keeps this method out of its callers
            s = s * 1.0000 + 0.5;
            s = s * 1.0001 + 1.5;
            s = s * 1.0002 + 2.5;
            s = s * 1.0003 + 3.5;
            s = s * 1.0004 + 4.5;
            s = s * 1.0005 + 5.5;
            s = s * 1.0006 + 6.5;
            s = s * 1.0007 + 7.5;
            s = s * 1.0008 + 8.5;
            s = s * 1.0009 + 9.5;
            s = s * 1.0010 + 10.5;
            s = s * 1.0011 + 11.5;
            s = s * 1.0012 + 12.5;
            s = s * 1.0013 + 13.5;
            s = s * 1.0014 + 14.5;
            s = s * 1.0015 + 15.5;
            s = s * 1.0016 + 16.5;
            s = s * 1.0017 + 17.5;
            s = s * 1.0018 + 18.5;
            s = s * 1.0019 + 19.5;
            s = s * 1.0020 + 20.5;
            s = s * 1.0021 + 21.5;
            s = s * 1.0022 + 22.5;
            s = s * 1.0023 + 23.5;
            s = s * 1.0024 + 24.5;
            s = s * 1.0025 + 25.5;
            s = s * 1.0026 + 26.5;
            s = s * 1.0027 + 27.5;
            s = s * 1.0028 + 28.5;
            s = s * 1.0029 + 29.5;
            s = s * 1.0030 + 30.5;
            s = s * 1.0031 + 31.5;
            s = s * 1.0032 + 32.5;
            s = s * 1.0033 + 33.5;
            s = s * 1.0034 + 34.5;
            s = s * 1.0035 + 35.5;
            s = s * 1.0036 + 36.5;
            s = s * 1.0037 + 37.5;
            s = s * 1.0038 + 38.5;
            s = s * 1.0039 + 39.5;
        }
        return s;
    }

    // small: C2 inlines it into middle, where its call of leaf records it
    // in middle's debug information (an inlined frame in the stacks)
    static double step(double x) {
        return leaf(x) * 0.5 + 1;
    }

    static double middle(double x) {
        double s = 0;
        for (int i = 0; i < 20; i++) {
            s += step(x + i);
        }
        if (s < -1e300) { // padding: keeps this method out of its callers
            s = s * 1.0000 + 0.5;
            s = s * 1.0001 + 1.5;
            s = s * 1.0002 + 2.5;
            s = s * 1.0003 + 3.5;
            s = s * 1.0004 + 4.5;
            s = s * 1.0005 + 5.5;
            s = s * 1.0006 + 6.5;
            s = s * 1.0007 + 7.5;
            s = s * 1.0008 + 8.5;
            s = s * 1.0009 + 9.5;
            s = s * 1.0010 + 10.5;
            s = s * 1.0011 + 11.5;
            s = s * 1.0012 + 12.5;
            s = s * 1.0013 + 13.5;
            s = s * 1.0014 + 14.5;
            s = s * 1.0015 + 15.5;
            s = s * 1.0016 + 16.5;
            s = s * 1.0017 + 17.5;
            s = s * 1.0018 + 18.5;
            s = s * 1.0019 + 19.5;
            s = s * 1.0020 + 20.5;
            s = s * 1.0021 + 21.5;
            s = s * 1.0022 + 22.5;
            s = s * 1.0023 + 23.5;
            s = s * 1.0024 + 24.5;
            s = s * 1.0025 + 25.5;
            s = s * 1.0026 + 26.5;
            s = s * 1.0027 + 27.5;
            s = s * 1.0028 + 28.5;
            s = s * 1.0029 + 29.5;
            s = s * 1.0030 + 30.5;
            s = s * 1.0031 + 31.5;
            s = s * 1.0032 + 32.5;
            s = s * 1.0033 + 33.5;
            s = s * 1.0034 + 34.5;
            s = s * 1.0035 + 35.5;
            s = s * 1.0036 + 36.5;
            s = s * 1.0037 + 37.5;
            s = s * 1.0038 + 38.5;
            s = s * 1.0039 + 39.5;
        }
        return s;
    }

    static double bottom(double x) {
        double s = 0;
        for (int i = 1; i < 400; i++) {
            s += Math.sqrt(x * i);
        }
        if (s < -1e300) { // padding: keeps this method out of its callers
            s = s * 1.0000 + 0.5;
            s = s * 1.0001 + 1.5;
            s = s * 1.0002 + 2.5;
            s = s * 1.0003 + 3.5;
            s = s * 1.0004 + 4.5;
            s = s * 1.0005 + 5.5;
            s = s * 1.0006 + 6.5;
            s = s * 1.0007 + 7.5;
            s = s * 1.0008 + 8.5;
            s = s * 1.0009 + 9.5;
            s = s * 1.0010 + 10.5;
            s = s * 1.0011 + 11.5;
            s = s * 1.0012 + 12.5;
            s = s * 1.0013 + 13.5;
            s = s * 1.0014 + 14.5;
            s = s * 1.0015 + 15.5;
            s = s * 1.0016 + 16.5;
            s = s * 1.0017 + 17.5;
            s = s * 1.0018 + 18.5;
            s = s * 1.0019 + 19.5;
            s = s * 1.0020 + 20.5;
            s = s * 1.0021 + 21.5;
            s = s * 1.0022 + 22.5;
            s = s * 1.0023 + 23.5;
            s = s * 1.0024 + 24.5;
            s = s * 1.0025 + 25.5;
            s = s * 1.0026 + 26.5;
            s = s * 1.0027 + 27.5;
            s = s * 1.0028 + 28.5;
            s = s * 1.0029 + 29.5;
            s = s * 1.0030 + 30.5;
            s = s * 1.0031 + 31.5;
            s = s * 1.0032 + 32.5;
            s = s * 1.0033 + 33.5;
            s = s * 1.0034 + 34.5;
            s = s * 1.0035 + 35.5;
            s = s * 1.0036 + 36.5;
            s = s * 1.0037 + 37.5;
            s = s * 1.0038 + 38.5;
            s = s * 1.0039 + 39.5;
        }
        return s;
    }

    static double recurse(int n, double x) {
        double s = 0;
        if (n == 0) {
            s = bottom(x);
        } else {
            s = recurse(n - 1, x + 1) + 1;
        }
        if (s < -1e300) { // padding: keeps this method out of its callers
            s = s * 1.0000 + 0.5;
            s = s * 1.0001 + 1.5;
            s = s * 1.0002 + 2.5;
            s = s * 1.0003 + 3.5;
            s = s * 1.0004 + 4.5;
            s = s * 1.0005 + 5.5;
            s = s * 1.0006 + 6.5;
            s = s * 1.0007 + 7.5;
            s = s * 1.0008 + 8.5;
            s = s * 1.0009 + 9.5;
            s = s * 1.0010 + 10.5;
            s = s * 1.0011 + 11.5;
            s = s * 1.0012 + 12.5;
            s = s * 1.0013 + 13.5;
            s = s * 1.0014 + 14.5;
            s = s * 1.0015 + 15.5;
            s = s * 1.0016 + 16.5;
            s = s * 1.0017 + 17.5;
            s = s * 1.0018 + 18.5;
            s = s * 1.0019 + 19.5;
            s = s * 1.0020 + 20.5;
            s = s * 1.0021 + 21.5;
            s = s * 1.0022 + 22.5;
            s = s * 1.0023 + 23.5;
            s = s * 1.0024 + 24.5;
            s = s * 1.0025 + 25.5;
            s = s * 1.0026 + 26.5;
            s = s * 1.0027 + 27.5;
            s = s * 1.0028 + 28.5;
            s = s * 1.0029 + 29.5;
            s = s * 1.0030 + 30.5;
            s = s * 1.0031 + 31.5;
            s = s * 1.0032 + 32.5;
            s = s * 1.0033 + 33.5;
            s = s * 1.0034 + 34.5;
            s = s * 1.0035 + 35.5;
            s = s * 1.0036 + 36.5;
            s = s * 1.0037 + 37.5;
            s = s * 1.0038 + 38.5;
            s = s * 1.0039 + 39.5;
        }
        return s;
    }

    static long alloc(int n) {
        long sum = 0;
        for (int i = 0; i < n; i++) {
            int[] a = new int[64 + (i & 63)];
            a[i & 63] = i;
            sum += a.length + a[i & 63];
        }
        double d = sum;
        if (d < -1e300) { // padding: keeps this method out of its callers
            d = d * 1.0000 + 0.5;
            d = d * 1.0001 + 1.5;
            d = d * 1.0002 + 2.5;
            d = d * 1.0003 + 3.5;
            d = d * 1.0004 + 4.5;
            d = d * 1.0005 + 5.5;
            d = d * 1.0006 + 6.5;
            d = d * 1.0007 + 7.5;
            d = d * 1.0008 + 8.5;
            d = d * 1.0009 + 9.5;
            d = d * 1.0010 + 10.5;
            d = d * 1.0011 + 11.5;
            d = d * 1.0012 + 12.5;
            d = d * 1.0013 + 13.5;
            d = d * 1.0014 + 14.5;
            d = d * 1.0015 + 15.5;
            d = d * 1.0016 + 16.5;
            d = d * 1.0017 + 17.5;
            d = d * 1.0018 + 18.5;
            d = d * 1.0019 + 19.5;
            d = d * 1.0020 + 20.5;
            d = d * 1.0021 + 21.5;
            d = d * 1.0022 + 22.5;
            d = d * 1.0023 + 23.5;
            d = d * 1.0024 + 24.5;
            d = d * 1.0025 + 25.5;
            d = d * 1.0026 + 26.5;
            d = d * 1.0027 + 27.5;
            d = d * 1.0028 + 28.5;
            d = d * 1.0029 + 29.5;
            d = d * 1.0030 + 30.5;
            d = d * 1.0031 + 31.5;
            d = d * 1.0032 + 32.5;
            d = d * 1.0033 + 33.5;
            d = d * 1.0034 + 34.5;
            d = d * 1.0035 + 35.5;
            d = d * 1.0036 + 36.5;
            d = d * 1.0037 + 37.5;
            d = d * 1.0038 + 38.5;
            d = d * 1.0039 + 39.5;
        }
        return sum + (long) d;
    }

    // Each phase lasts ARG/3 ms of this thread's CPU time, not of wall time:
    // on a busy machine a phase takes longer but gets the same samples (the
    // sampler counts CPU time), so the test's shares and counts do not depend
    // on the scheduler.  The clock is read every 16 calls, from main itself (a
    // method of this class would be a frame the test does not expect).
    public static void main(String[] args) {
        long ns = Long.parseLong(args.length > 0 ? args[0] : "6000") * 1000000 / 3;
        java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
        double s = 0;
        long end = cpu.getCurrentThreadCpuTime() + ns;
        while (cpu.getCurrentThreadCpuTime() < end) {
            for (int k = 0; k < 16; k++) {
                s += middle(s % 7);
            }
        }
        end = cpu.getCurrentThreadCpuTime() + ns;
        while (cpu.getCurrentThreadCpuTime() < end) {
            for (int k = 0; k < 16; k++) {
                s += recurse(12, s % 5);
            }
        }
        end = cpu.getCurrentThreadCpuTime() + ns;
        while (cpu.getCurrentThreadCpuTime() < end) {
            for (int k = 0; k < 16; k++) {
                s += alloc(1000);
            }
        }
        System.out.println(s > 0 ? "done" : "done.");
    }
}
